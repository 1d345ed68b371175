package io.npmagent.pipelines.swarm;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A pod's k-th write against a timing watcher's k-th event of it: latencies, missed and extra updates. */
class PodWritesTest {
    @Test
    void eachEventIsMatchedWithTheWriteOfTheSameRank() {
        PodWrites writes = new PodWrites();
        writes.sent("a", 1_000_000_000L);
        writes.sent("a", 2_000_000_000L);
        writes.sent("b", 3_000_000_000L);
        DeliveryLog seen = new DeliveryLog();
        seen.event("a", 1_010_000_000L);
        seen.event("a", 2_500_000_000L);
        seen.event("b", 3_001_000_000L);

        PodWrites.Delivery d = writes.delivered(java.util.List.of(seen));

        assertThat(d.seconds()).containsExactlyInAnyOrder(0.01, 0.5, 0.001);
        assertThat(d.missed()).isZero();
        assertThat(d.extra()).isZero();
        assertThat(d.watchersChecked()).isEqualTo(1);
    }

    @Test
    void aWriteNeverSeenIsMissedAndAnEventWithoutAWriteIsExtra() {
        PodWrites writes = new PodWrites();
        writes.sent("a", 1);
        writes.sent("a", 2);
        writes.sent("b", 3);
        DeliveryLog one = new DeliveryLog();
        one.event("a", 5);
        one.event("b", 6);
        one.event("b", 7);

        PodWrites.Delivery d = writes.delivered(java.util.List.of(one));

        assertThat(d.missed()).isEqualTo(1);
        assertThat(d.extra()).isEqualTo(1);
    }

    @Test
    void aWatcherThatRelistedIsNotHeldToEveryUpdate() {
        PodWrites writes = new PodWrites();
        writes.sent("a", 1);
        DeliveryLog relisted = new DeliveryLog();
        relisted.relisted();

        PodWrites.Delivery d = writes.delivered(java.util.List.of(relisted));

        assertThat(d.missed()).isZero();
        assertThat(d.watchersChecked()).isZero();
        assertThat(d.watchersRelisted()).isEqualTo(1);
    }
}
