package io.npmagent.pipelines.scale;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.kernel.KernelTestSupport;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The npm640 pipeline, small, so it cannot rot: every policy lands and the kernel matches the desired
 * state at the end (the run itself fails otherwise). Timing is printed by {@code pipelines/scale}, never
 * asserted here.
 */
class Npm640SmokeKernelTest {

    @ParameterizedTest
    @ValueSource(strings = {"bpf", "iptables-nft", "iptables-legacy", "nft"})
    void everyPolicyLandsInBothModes(String backend) {
        KernelTestSupport.require(switch (backend) {
            case "nft" -> new String[] {"nft", "iptables-nft-restore"};
            case "bpf" -> new String[] {"mount", "umount", "iptables-nft-restore"};
            default -> new String[] {"ipset", backend + "-restore"};
        });
        for (boolean background : new boolean[] {false, true}) {
            ScaleResult r = Npm640.run(backend, background, 24);
            assertThat(r.netpols()).isEqualTo(24);
            assertThat(r.mode()).isEqualTo(background ? "background" : "foreground");
            assertThat(r.transactions()).as("foreground a transaction per policy, background per batch")
                    .isGreaterThanOrEqualTo(background ? 1 : 24);
            assertThat(r.json()).startsWith("{\"scenario\": \"npm640\", \"backend\": \"" + backend + "\"");
        }
    }

    @Test
    void theTablePutsForegroundAndBackgroundSideBySide() {
        String table = ScaleMain.table(List.of(
                new ScaleResult("npm640", "iptables-nft", "background", 640, 2.0, 0.15, 0.4, 0.46, 0.5, 11),
                new ScaleResult("npm640", "nft", "foreground", 640, 30, 0.05, 0.04, 0.07, 0.08, 1900),
                new ScaleResult("npm640", "nft", "background", 640, 0.5, 0.15, 0.4, 0.46, 0.5, 11)));
        assertThat(table).contains("60.0x").contains("nft              background");
        assertThat(table.lines().filter(l -> l.startsWith("nft              background")).findFirst().orElseThrow())
                .as("4x faster than batched iptables-nft").contains(" 4.0x");
    }
}
