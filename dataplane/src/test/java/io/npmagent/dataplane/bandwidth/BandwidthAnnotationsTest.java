package io.npmagent.dataplane.bandwidth;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.model.Pod;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class BandwidthAnnotationsTest {

    private static Pod pod(Map<String, String> annotations) {
        return Pod.builder("shop", "api").annotations(annotations).build();
    }

    @Test
    void readsBothDirectionsInBitsPerSecond() {
        BandwidthAnnotations.Read r = BandwidthAnnotations.read(pod(Map.of(
                BandwidthAnnotations.EGRESS, "50M", BandwidthAnnotations.INGRESS, "1.5Gi")));
        assertThat(r.errors()).isEmpty();
        assertThat(r.limits()).isEqualTo(new BandwidthLimits(50_000_000L, 1_610_612_736L));
    }

    @Test
    void noAnnotationIsNoLimit() {
        BandwidthAnnotations.Read r = BandwidthAnnotations.read(pod(Map.of("other", "1M")));
        assertThat(r.limits()).isEqualTo(BandwidthLimits.NONE);
        assertThat(r.errors()).isEmpty();
    }

    @ParameterizedTest
    @CsvSource({"1k, 1000", "1P, 1000000000000000", "1000001m, 1001", "999.0001k, 999001"})
    void acceptsTheRangeKubeletAcceptsRoundingUp(String text, long bits) {
        BandwidthAnnotations.Read r = BandwidthAnnotations.read(pod(Map.of(BandwidthAnnotations.EGRESS, text)));
        assertThat(r.errors()).isEmpty();
        assertThat(r.limits().egressBitsPerSecond()).isEqualTo(bits);
    }

    @ParameterizedTest
    @CsvSource({"999, unreasonably small", "0.999k, unreasonably small", "-5M, unreasonably small", "0, unreasonably small",
            "1001T, unreasonably large", "1Pi, unreasonably large", "1E, unreasonably large", "fast, not a quantity"})
    void rejectsTheRestNamingPodAnnotationAndValue(String text, String why) {
        BandwidthAnnotations.Read r = BandwidthAnnotations.read(pod(Map.of(
                BandwidthAnnotations.INGRESS, text, BandwidthAnnotations.EGRESS, "10M")));
        assertThat(r.limits()).isEqualTo(new BandwidthLimits(10_000_000L, 0));
        assertThat(r.errors()).singleElement().satisfies(e -> assertThat(e.toString())
                .contains("Pod shop/api", "metadata.annotations[kubernetes.io/ingress-bandwidth]", "\"" + text + "\"", why));
    }

    @Test
    void aHostileValueCannotForgeALogLine() {
        BandwidthAnnotations.Read r = BandwidthAnnotations.read(pod(Map.of(BandwidthAnnotations.EGRESS, "1M\nINFO all good")));
        assertThat(r.errors()).singleElement().satisfies(e -> assertThat(e.toString()).doesNotContain("\n"));
        assertThat(r.limits()).isEqualTo(BandwidthLimits.NONE);
    }
}
