package io.npmagent.pipelines.datapath;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class BigTcpTableTest {
    @Test
    void oneLinePerSettingAndFamilyWithTheLimitedRatesSpread() {
        String t = BigTcpRun.table(List.of(new BigTcpRun.Row(false, "IPv4", 11.93, 138.4, 999.6, 985.2, 1010.3, 36008, 65_536),
                new BigTcpRun.Row(true, "IPv4", 18.44, 70.6, 970.9, 933.1, 1020.5, 44913, 196_608)));
        List<String> lines = t.lines().toList();
        assertThat(lines.get(1)).matches("off\\s+IPv4\\s+11\\.93\\s+138\\s+65536\\s+999\\.6\\s+985-1010\\s+36008");
        assertThat(lines.get(2)).matches("on\\s+IPv4\\s+18\\.44\\s+71\\s+196608\\s+970\\.9\\s+933-1021\\s+44913");
    }
}
