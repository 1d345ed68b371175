package io.npmagent.dataplane.policy;

import io.npmagent.dataplane.model.ClusterEvent;
import net.jqwik.api.Arbitrary;

/** The random cluster events of {@link ClusterArbitraries}, for tests in other packages. */
public final class ClusterEventsForTests {
    private ClusterEventsForTests() {}

    public static Arbitrary<ClusterEvent> event() {
        return ClusterArbitraries.event();
    }
}
