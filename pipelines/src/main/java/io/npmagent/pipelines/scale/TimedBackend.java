package io.npmagent.pipelines.scale;

import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.backend.BackendStatus;
import io.npmagent.dataplane.backend.Batch;

/**
 * Times every transaction (one {@code apply}) of the backend it wraps and keeps the longest: the same
 * measure for every backend, whether a transaction is an ipset and an iptables restore, one
 * {@code nft -f}, or a few batched eBPF map writes and a flip.
 */
final class TimedBackend implements Backend {
    private final Backend inner;
    private long longestNanos;
    private int transactions;

    TimedBackend(Backend inner) {
        this.inner = inner;
    }

    @Override
    public String name() {
        return inner.name();
    }

    @Override
    public void apply(Batch batch) {
        long start = System.nanoTime();
        inner.apply(batch);
        long took = System.nanoTime() - start;
        synchronized (this) {
            longestNanos = Math.max(longestNanos, took);
            transactions++;
        }
    }

    @Override
    public int reconcile() {
        return inner.reconcile();
    }

    @Override
    public int quickReconcile() {
        return inner.quickReconcile();
    }

    @Override
    public void uninstall() {
        inner.uninstall();
    }

    @Override
    public BackendStatus status() {
        return inner.status();
    }

    @Override
    public void close() {
        inner.close();
    }

    synchronized double longestSeconds() {
        return longestNanos / 1e9;
    }

    synchronized int transactions() {
        return transactions;
    }

    /** Forgets what was timed so far (the untimed setup batch). */
    synchronized void reset() {
        longestNanos = 0;
        transactions = 0;
    }
}
