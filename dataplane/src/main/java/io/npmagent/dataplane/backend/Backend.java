package io.npmagent.dataplane.backend;

import io.npmagent.dataplane.flow.FlowSource;

/**
 * Makes the kernel enforce the desired state, one batch at a time.
 *
 * <p><b>Contract.</b> {@link #apply} lands the whole batch or throws {@link BackendException}; after a
 * throw, the backend's idea of what is applied is as before the batch (it may have to re-read the
 * kernel to know what a failed call left behind, and it repairs that on its next call). Each batch's
 * {@link io.npmagent.dataplane.desired.Change#before() before} values are what the backend has applied.
 * How each backend keeps this is its "A batch's atomicity" ({@code BpfBackend}, {@code NetfilterBackend});
 * what happens to a refused batch next is the queue's ({@link io.npmagent.dataplane.batch.BatchQueue}).
 *
 * <p>A pod row may list a policy the backend does not hold (its batch failed and waits for a retry):
 * the pod is then enforced as isolated by the policies it does hold, which fails closed, and the missing
 * policy joins when it lands.
 *
 * <p>The first call reads back what a previous run left in the kernel and converges to the desired
 * state without flushing first, so a restart never opens a pod; {@link #reconcile} does the same later
 * to repair drift, and {@link #quickReconcile} the part of it that is cheap at any scale;
 * {@link #uninstall} removes everything the backend ever creates.
 */
public interface Backend extends AutoCloseable {

    /** {@code iptables-nft}, {@code iptables-legacy}, {@code nft}, {@code bpf}, {@code fake}. */
    String name();

    void apply(Batch batch);

    /**
     * Reads every kernel object of the backend's back and rewrites what differs; returns objects
     * repaired. At scale this reads hundreds of thousands of entries and takes seconds.
     */
    int reconcile();

    /**
     * Checks what others most often undo, cheaply enough for every reconcile period at any scale: the
     * hooks that send packets to the backend's objects and the dispatch from each local pod to its rules
     * (a flushed ruleset, a replaced tc filter). Anything there not as written leads to a full
     * {@link #reconcile}; returns objects repaired. Peer set contents wait for the next full one.
     */
    int quickReconcile();

    /** Removes every kernel object this backend creates, whatever run created it. */
    void uninstall();

    BackendStatus status();

    /** Whether local pods' bandwidth limits ({@code LocalPod.bandwidth}) are enforced; only the eBPF backend's are. */
    default boolean enforcesBandwidth() {
        return false;
    }

    /** Whether local pods' congestion controls ({@code LocalPod.congestion}) are applied; only the eBPF backend's are, given a cgroup root. */
    default boolean enforcesCongestion() {
        return false;
    }

    /**
     * The backend's flow verdicts ({@code npm-agent flows}): its kernel's reports of denied (and, where
     * enabled, allowed) flows with what decided them. Its {@link FlowSource#refs() refs} are written with
     * every verdict from the first {@link #apply} on, whether or not reports are started.
     */
    default FlowSource flows() {
        return FlowSource.NONE;
    }

    @Override
    default void close() {}
}
