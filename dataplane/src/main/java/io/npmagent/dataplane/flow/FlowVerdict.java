package io.npmagent.dataplane.flow;

/** What the kernel did with a flow's packets. */
public enum FlowVerdict {
    ALLOWED,
    DENIED
}
