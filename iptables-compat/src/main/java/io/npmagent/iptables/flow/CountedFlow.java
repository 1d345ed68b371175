package io.npmagent.iptables.flow;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import java.time.Duration;

/**
 * One element of a flow set as read back: the flow (its direction is the set's) and its counters.
 *
 * @param expires how long the element has left, or null where the listing does not say; the flow's
 *                latest packet was {@link FlowMarks#FLOW_TIMEOUT} minus this ago (each packet refreshes it)
 */
public record CountedFlow(Direction direction, IpAddress source, IpAddress destination, int protocol, int port, long packets, long bytes,
        Duration expires) {

    /** A listing of every flow set: the elements, and how many sets were found full (their new flows go uncounted). */
    public record Reading(java.util.List<CountedFlow> flows, int fullSets) {}
}
