package io.npmagent.pipelines.bandwidth;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

class BandwidthTableTest {
    private static final List<BandwidthPoint> POINTS = List.of(
            new BandwidthPoint("latency", "tbf", "egress", 100_000_000, 4, 95_600_000, 0, new RrProbe.Latency(200, 12_000, 18_000, 20_000, 24_000, 25_000, 0, 6_400), null),
            new BandwidthPoint("latency", "edt", "egress", 100_000_000, 4, 90_000_000, 35_000, new RrProbe.Latency(90_000, 60, 90, 100, 600, 900, 0, 2_880_000), null),
            BandwidthPoint.failed("accuracy", "edt", "ingress", 10_000_000, 1, "sandbox up: no"));

    @Test
    void jsonHasTheFieldsOfTheIssue() {
        JsonArray results = new Gson().fromJson(BandwidthTable.json("cmd", POINTS), JsonObject.class).getAsJsonArray("results");
        JsonObject edt = results.get(1).getAsJsonObject();
        assertThat(edt.get("shaper").getAsString()).isEqualTo("edt");
        assertThat(edt.get("limit_mbit").getAsDouble()).isEqualTo(100.0);
        assertThat(edt.get("achieved_mbit").getAsDouble()).isEqualTo(90.0);
        assertThat(edt.get("rr_p50_us").getAsDouble()).isEqualTo(60.0);
        assertThat(edt.get("rr_p99_us").getAsDouble()).isEqualTo(100.0);
        assertThat(edt.get("rr_p999_us").getAsDouble()).isEqualTo(600.0);
        assertThat(edt.get("retransmits").getAsLong()).isEqualTo(35_000);
        JsonObject failed = results.get(2).getAsJsonObject();
        assertThat(failed.get("achieved_mbit").isJsonNull()).isTrue();
        assertThat(failed.get("error").getAsString()).contains("sandbox up");
    }

    @Test
    void tableGivesTheLatencyRatioAndTheDeviation() {
        String text = BandwidthTable.text(POINTS);
        assertThat(text).contains("edt 100 us, tbf 20000 us: 200.0x lower with edt");
        assertThat(text).contains("-10.0%").contains("-4.4%").contains("FAILED: sandbox up: no");
    }
}
