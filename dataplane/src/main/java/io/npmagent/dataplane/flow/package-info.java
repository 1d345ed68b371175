/**
 * Flow verdicts: "this connection fails: was it a policy, and which one?" answered from what the kernel
 * did. A backend reads its kernel's reports of flows ({@link io.npmagent.dataplane.flow.FlowReport}: eBPF's
 * ring buffer, netfilter's NFLOG), each carrying the attribution reference its verdict read
 * ({@link io.npmagent.dataplane.flow.AttributionRefs}), which the backend wrote into the kernel with the
 * rule or the isolation that decides. {@link io.npmagent.dataplane.flow.FlowLog} aggregates them into
 * flows ({@link io.npmagent.dataplane.flow.FlowRecord}, the event every surface prints), with expiry.
 *
 * <p>A flow is the source, the destination, its port and protocol and the direction judged: a client's
 * retries from new source ports are one flow, counted. Attribution is fixed when the kernel decides:
 * a reference never changes meaning, so a policy edited or deleted after the drop cannot rewrite what
 * the flow says decided it.
 */
package io.npmagent.dataplane.flow;
