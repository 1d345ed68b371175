package io.npmagent.agent.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The metric-name reader the manifest checks rely on: it must find every metric, and only metrics. */
class PromQlTest {

    @Test
    void findsTheMetricsAndNotFunctionsLabelsKeywordsOrDurations() {
        assertThat(PromQl.metricNames("histogram_quantile(0.99, sum by (le, instance) (rate(foo_seconds_bucket{job=\"a\", le!=\"+Inf\"}[5m]))) > 5"))
                .containsExactly("foo_seconds_bucket");
        assertThat(PromQl.metricNames("min_over_time(pending{job=\"a\"}[10m]) > 0 and on (instance) sum by (instance) (increase(applied_count[10m])) == 0"))
                .containsExactly("pending", "applied_count");
        assertThat(PromQl.metricNames("sum(rate(a_total[5m])) without (pod) / ignoring(x) group_left(y) b offset 1h"))
                .containsExactly("a_total", "b");
        assertThat(PromQl.metricNames("count(up{job=\"npm-agent\"} == 0) or vector(0)")).containsExactly("up");
        assertThat(PromQl.metricNames("absent(up{job=\"npm-agent\"})")).containsExactly("up");
        assertThat(PromQl.metricNames("x > bool 1e3 unless y")).containsExactly("x", "y");
    }

    @Test
    void readsGrafanasVariablesAndLabelValues() {
        assertThat(PromQl.metricNames("topk(10, 8 * sum by (pod) (rate(bytes_total{instance=~\"$instance\"}[$__rate_interval])))"))
                .containsExactly("bytes_total");
        assertThat(PromQl.metricNames("label_values(up{job=\"npm-agent\"}, instance)")).containsExactly("up");
        assertThat(PromQl.metricNames("label_values(instance)")).isEmpty();
        assertThat(PromQl.metricNames("rate(x[${interval}])")).containsExactly("x");
    }

    @Test
    void selectorsCarryTheirMatchersAndBareOnesAreFound() {
        assertThat(PromQl.selectors("a{job=\"j\"} / on (instance) b"))
                .containsExactly(new PromQl.Selector("a", "job=\"j\""), new PromQl.Selector("b", ""));
        assertThat(PromQl.selectors("sum by (job) (rate(a_total{job=\"j\", kind=\"a_total\"}[5m]))"))
                .containsExactly(new PromQl.Selector("a_total", "job=\"j\", kind=\"a_total\""));
    }

    @Test
    void refusesWhatItCannotReadFaithfully() {
        assertThatThrownBy(() -> PromQl.metricNames("{__name__=~\"npm_.*\"}")).hasMessageContaining("__name__");
        assertThatThrownBy(() -> PromQl.metricNames("sum(rate(x[5m])")).hasMessageContaining("unclosed");
        assertThatThrownBy(() -> PromQl.metricNames("x{a=\"b\"]")).hasMessageContaining("unbalanced");
    }
}
