package io.npmagent.pipelines.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class PromTextTest {
    private static final String BEFORE = """
            # TYPE npm_policy_apply_delay_seconds histogram
            npm_policy_apply_delay_seconds_bucket{le="0.1"} 10
            npm_policy_apply_delay_seconds_bucket{le="0.5"} 10
            npm_policy_apply_delay_seconds_bucket{le="1.0"} 10
            npm_policy_apply_delay_seconds_bucket{le="+Inf"} 10
            npm_policy_apply_delay_seconds_count 10
            npm_policy_apply_delay_seconds_sum 0.5
            npm_policy_apply_delay_seconds_other 3
            """;
    private static final String AFTER = """
            npm_policy_apply_delay_seconds_bucket{le="0.1"} 60
            npm_policy_apply_delay_seconds_bucket{le="0.5"} 100
            npm_policy_apply_delay_seconds_bucket{le="1.0"} 110
            npm_policy_apply_delay_seconds_bucket{le="+Inf"} 110
            jvm_memory_used_bytes{area="heap"} 100
            jvm_memory_used_bytes{area="nonheap"} 7
            """;

    @Test
    void quantilesOfWhatWasObservedBetweenTwoScrapes() {
        TreeMap<Double, Double> growth = PromText.growth(PromText.buckets(BEFORE, "npm_policy_apply_delay_seconds"),
                PromText.buckets(AFTER, "npm_policy_apply_delay_seconds"));
        assertThat(growth.lastEntry().getValue()).isEqualTo(100);
        // 50 in (0, 0.1], 40 in (0.1, 0.5], 10 in (0.5, 1]: the median is the top of the first bucket.
        assertThat(PromText.quantile(growth, 0.5)).isCloseTo(0.1, within(1e-9));
        assertThat(PromText.quantile(growth, 0.7)).isCloseTo(0.1 + 0.4 * 20 / 40, within(1e-9));
        assertThat(PromText.quantile(growth, 0.99)).isCloseTo(0.5 + 0.5 * 9 / 10, within(1e-9));
    }

    @Test
    void samplesByLabelsAndNotOfOtherMetricsWithTheSamePrefix() {
        assertThat(PromText.samples(AFTER, "jvm_memory_used_bytes")).containsEntry("{area=\"heap\"}", 100.0).hasSize(2);
        assertThat(PromText.samples(BEFORE, "npm_policy_apply_delay_seconds_count")).containsEntry("", 10.0).hasSize(1);
        assertThat(PromText.quantile(new TreeMap<>(), 0.5)).isNaN();
    }

    @Test
    void seriesChosenByTheirLabels() {
        String text = """
                apiserver_request_duration_seconds_bucket{resource="pods",verb="POST",le="0.1"} 4
                apiserver_request_duration_seconds_bucket{resource="pods",verb="POST",le="+Inf"} 5
                apiserver_request_duration_seconds_bucket{resource="pods",verb="LIST",le="0.1"} 1
                apiserver_request_duration_seconds_bucket{resource="pods",verb="LIST",le="+Inf"} 100
                apiserver_longrunning_requests{resource="pods",verb="WATCH"} 7
                apiserver_longrunning_requests{resource="pods",verb="CONNECT"} 2
                """;
        assertThat(PromText.buckets(text, "apiserver_request_duration_seconds", l -> l.contains("verb=\"POST\"")))
                .containsEntry(0.1, 4.0).containsEntry(Double.POSITIVE_INFINITY, 5.0).hasSize(2);
        assertThat(PromText.total(text, "apiserver_longrunning_requests", l -> l.contains("verb=\"WATCH\""))).isEqualTo(7.0);
    }
}
