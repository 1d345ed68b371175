package io.npmagent.bpf;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class BbrTest {
    @Test
    void refusedWhereTimestampsDoNotSurviveTheNamespaceCrossing() {
        assertThat(Bbr.refusal(new Bbr.Probe(false, List.of("reno", "cubic", "bbr"), "cubic")))
                .hasValueSatisfying(why -> assertThat(why).contains("timestamps").contains("5.18"));
    }

    @Test
    void refusedWhereTheKernelHasNoBbr() {
        assertThat(Bbr.refusal(new Bbr.Probe(true, List.of("reno", "cubic"), "cubic")))
                .hasValueSatisfying(why -> assertThat(why).contains("bbr is not among").contains("reno cubic"));
    }

    @Test
    void allowedOtherwise() {
        assertThat(Bbr.refusal(new Bbr.Probe(true, List.of("reno", "cubic", "bbr"), "cubic"))).isEmpty();
    }
}
