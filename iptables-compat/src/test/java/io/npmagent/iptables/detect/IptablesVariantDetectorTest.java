package io.npmagent.iptables.detect;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.exec.ScriptedRunner;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The kube-proxy rule: kubelet's hint chain first, then whichever variant holds more rules, nft on a tie. */
class IptablesVariantDetectorTest {
    private static final String HINT = "*mangle\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n";
    private static final String NO_HINT = "*mangle\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n";

    private static List<String> save(String variant, String family, String... table) {
        String tool = ("4".equals(family) ? "iptables-" : "ip6tables-") + variant + "-save";
        return table.length == 0 ? List.of(tool) : List.of(tool, "-t", table[0]);
    }

    @Test
    void kubeletsHintInTheNftMangleTablePicksNft() {
        ScriptedRunner r = new ScriptedRunner().expect(save("nft", "4", "mangle"), HINT);
        IptablesVariantDetector.Choice c = new IptablesVariantDetector(r).detect();
        assertThat(c.variant()).isEqualTo(IptablesVariant.NFT);
        assertThat(c.reason()).contains("hint");
    }

    @Test
    void kubeletsHintInTheLegacyMangleTablePicksLegacy() {
        ScriptedRunner r = new ScriptedRunner()
                .expect(save("nft", "4", "mangle"), NO_HINT).expect(save("nft", "6", "mangle"), NO_HINT)
                .expect(save("legacy", "4", "mangle"), NO_HINT)
                .expect(save("legacy", "6", "mangle"), "*mangle\n:KUBE-KUBELET-CANARY - [0:0]\nCOMMIT\n");
        assertThat(new IptablesVariantDetector(r).detect().variant()).isEqualTo(IptablesVariant.LEGACY);
    }

    @Test
    void withoutHintsTheVariantWithMoreRulesWinsAndNftWinsTies() {
        String threeRules = "*filter\n-A FORWARD -j A\n-A FORWARD -j B\n-A INPUT -j C\nCOMMIT\n";
        String oneRule = "*filter\n-A FORWARD -j A\nCOMMIT\n";
        ScriptedRunner legacyMore = noHints().expect(save("legacy", "4"), threeRules).expect(save("legacy", "6"), "")
                .expect(save("nft", "4"), oneRule).expect(save("nft", "6"), "");
        IptablesVariantDetector.Choice c = new IptablesVariantDetector(legacyMore).detect();
        assertThat(c.variant()).isEqualTo(IptablesVariant.LEGACY);
        assertThat(c.reason()).isEqualTo("3 legacy rules against 1 nft rules");

        ScriptedRunner tie = noHints().expect(save("legacy", "4"), oneRule).expect(save("legacy", "6"), "")
                .expect(save("nft", "4"), oneRule).expect(save("nft", "6"), "");
        assertThat(new IptablesVariantDetector(tie).detect().variant()).isEqualTo(IptablesVariant.NFT);
    }

    private static ScriptedRunner noHints() {
        return new ScriptedRunner()
                .expect(save("nft", "4", "mangle"), NO_HINT).expect(save("nft", "6", "mangle"), NO_HINT)
                .expect(save("legacy", "4", "mangle"), NO_HINT).expect(save("legacy", "6", "mangle"), NO_HINT);
    }
}
