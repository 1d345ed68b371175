package io.npmagent.dataplane.batch;

import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.backend.BackendException;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.metrics.Metrics;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * Between the compiler and a backend: NPM's {@code NetPolInBackground}, done right.
 *
 * <p><b>What it owns.</b> The changes not yet applied, coalesced by key ({@link PendingChanges}: the
 * latest version of a row wins, a change undone before it was applied disappears), the retry state of
 * refused parts, and the events waiting to be counted as enforced.
 *
 * <p><b>When a batch goes.</b> In the background, adaptive (the default): a change goes as soon as no
 * batch is in flight; what arrives while one is goes together in the next, so batches grow with the rate
 * of change and a lone change never waits for a timer. The {@code interval} still flushes, as a backstop
 * and for retries that fall due. In the background with a fixed interval (NPM's queue): every
 * {@code interval}, and at once when {@code maxPendingNetPols} policy changes wait. In the foreground
 * ({@code background} off): every {@link #submit} applies its own event, one transaction, before it
 * returns; that is the baseline the benchmarks compare against.
 *
 * <p><b>A batch's retry and isolation</b> (decided here, in {@link #flushNow}; the one place). One
 * {@link Backend#apply} for the whole batch. Whatever the backend throws is a refusal, never a lost
 * batch: each part ({@link Batch#units()}, one object's changes, in their dependency order) is then
 * applied on its own, so the good parts land and each bad one is isolated to its object (a batch of
 * one part is not tried twice). A refused part is logged with the object and the kernel's words (its
 * refused input once per distinct error), counted ({@code npm_apply_failures_total{kind}}), and put
 * back under any newer change of the same keys, to be retried after 1 s, doubling to 5 min
 * ({@link RetryPolicy}); while it waits, later flushes take only what is due, so other changes do not
 * wait for it, and a newer change that undoes it ends its retries. An event counts as enforced
 * ({@code npm_policy_apply_delay_seconds}) once none of its changes waits. Until a refused policy lands,
 * the pods listing it stay isolated without its allows (the {@link Backend} contract). Whether a
 * backend lands one {@code apply} whole or not at all is the backend's, not the queue's: "A batch's
 * atomicity" in {@code BpfBackend} (bpf) and {@code NetfilterBackend} (iptables-compat).
 *
 * <p><b>Threads.</b> {@link #submit} is called by the one model thread; flushes run on the scheduler's
 * one thread (background) or the submitting thread (foreground), never two at once. The backend is
 * called without holding the lock that {@code submit} takes, so a slow restore never blocks the model.
 */
public final class BatchQueue implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(BatchQueue.class.getName());

    private final Backend backend;
    private volatile QueueConfig config;
    private volatile int policiesInKernel;
    /** The periodic flush, rescheduled when the interval changes. */
    private FlushScheduler.Cancellable periodicFlush;
    private final RetryPolicy retry;
    private final InstantSource clock;
    private final FlushScheduler scheduler;
    private final Metrics metrics;

    private final Object lock = new Object();
    /** A flush has taken events out and not yet settled them: not idle, though nothing is pending. */
    private boolean inFlight;
    /**
     * An adaptive wake-up waits on the flush thread: later submissions need not ask for another, since it
     * takes everything pending when it runs. Cleared when a flush takes what is pending.
     */
    private boolean wakeQueued;
    private final PendingChanges pending = new PendingChanges();
    private final List<Event> events = new ArrayList<>();
    private final Map<Batch.UnitKey, UnitFailure> failures = new HashMap<>();
    private final ReentrantLock flushing = new ReentrantLock();
    /** Reconcile periods so far (the scheduler's one thread counts them). */
    private int reconcilePeriods;
    private boolean started;
    private volatile Consumer<Duration> enforced = delay -> {};

    /** An event as it reached the queue, until all its changes are in the kernel. */
    private record Event(Instant received, DesiredDelta delta) {}

    public BatchQueue(Backend backend, QueueConfig config, RetryPolicy retry, InstantSource clock,
            FlushScheduler scheduler, Metrics metrics) {
        this.backend = Objects.requireNonNull(backend);
        this.config = Objects.requireNonNull(config);
        this.retry = Objects.requireNonNull(retry);
        this.clock = Objects.requireNonNull(clock);
        this.scheduler = Objects.requireNonNull(scheduler);
        this.metrics = Objects.requireNonNull(metrics);
        exportFailing();
    }

    /** Starts the periodic background flush; also flushes refused parts when their retry is due. */
    public void start() {
        synchronized (lock) {
            if (started) {
                return;
            }
            started = true;
            periodicFlush = scheduler.every(flushPeriod(config), this::flushQuietly);
        }
    }

    private Duration flushPeriod(QueueConfig c) {
        return c.background() ? c.interval() : retry.initial();
    }

    /**
     * Takes new batching settings at run time (a ConfigMap edit): the next submission already follows
     * them. Turning background off applies what waits now; a new interval replaces the old period.
     */
    public void reconfigure(QueueConfig next) {
        QueueConfig before;
        synchronized (lock) {
            before = config;
            config = Objects.requireNonNull(next);
            if (started && !flushPeriod(before).equals(flushPeriod(next))) {
                periodicFlush.cancel();
                periodicFlush = scheduler.every(flushPeriod(next), this::flushQuietly);
            }
        }
        if (before.background() && !next.background() || next.background() && next.adaptive() && !before.adaptive()) {
            scheduler.soon(this::flushQuietly); // what waited goes now, as the new setting would have sent it
        }
    }

    public QueueConfig config() {
        return config;
    }

    /** Calls {@code listener} with each event's delay from arrival to kernel (benchmarks record exact percentiles). */
    public void onEnforced(Consumer<Duration> listener) {
        this.enforced = Objects.requireNonNull(listener);
    }

    /**
     * A full reconcile every this many periods, a quick one at the others. A full one reads every object
     * back (at 100,000 pods, seconds during which batches wait); the quick one checks, within
     * milliseconds, what a flushed ruleset or a CNI undoes: hooks, base chains, dispatch, attachments. So
     * a flush is repaired within one period (10 s by default), any other drift within 30 (5 min), as
     * Felix refreshes its iptables every 90 s.
     */
    public static final int FULL_RECONCILE_EVERY = 30;
    /** How much of a refused restore file or script the log shows. */
    static final int MAX_LOGGED_INPUT = 8192;

    /**
     * Repairs drift every {@code period}, on the flush thread, so never during a batch: what is due is
     * flushed first, then a quick reconcile, or a full one every {@link #FULL_RECONCILE_EVERY}th period.
     * Periods before {@link #start} pass without one.
     */
    public void reconcileEvery(Duration period) {
        scheduler.every(period, this::reconcileQuietly);
    }

    /**
     * Policies in the kernel as of the last batch, read on the flush thread: for other threads (the
     * model thread's status), which must never wait on the backend while it writes or checks the kernel.
     */
    public int policiesInKernel() {
        return policiesInKernel;
    }

    /** A full reconcile now, in the caller's thread, between batches; returns objects repaired. */
    public int reconcileNow() {
        return reconcile(backend::reconcile);
    }

    private int reconcile(IntSupplier how) {
        flushing.lock();
        try {
            int repaired = how.getAsInt();
            if (repaired > 0) {
                LOG.log(System.Logger.Level.WARNING, "{0}: repaired {1} kernel objects that had drifted", backend.name(), repaired);
            }
            return repaired;
        } finally {
            flushing.unlock();
        }
    }

    private void reconcileQuietly() {
        synchronized (lock) {
            if (!started) {
                // Before start the backend holds only what it was given so far, perhaps nothing, while the
                // kernel holds a previous run's enforcement: a reconcile now would "repair" that away, and
                // at 100,000 pods the first whole state takes a minute to list.
                return;
            }
        }
        try {
            // What is due goes first: a drift check can take a while at scale, and changes should not wait for it.
            flushNow();
            reconcile(++reconcilePeriods % FULL_RECONCILE_EVERY == 0 ? backend::reconcile : backend::quickReconcile);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "reconcile failed; the next period tries again", e);
        }
    }

    /**
     * Queues one event's changes. In the foreground, applies them before returning. In the background,
     * adaptive: wakes the flusher unless a wake-up already waits (a batch in flight is followed at once by
     * the next); fixed-interval: wakes it when {@code maxPendingNetPols} policy changes are due (once).
     */
    public void submit(DesiredDelta delta) {
        if (delta.isEmpty()) {
            return;
        }
        QueueConfig c = config;
        int due;
        boolean wake = false;
        synchronized (lock) {
            pending.addNewer(delta);
            events.add(new Event(clock.instant(), delta));
            due = failures.isEmpty() ? pending.policyCount() : pending.policies(this::isDue);
            metrics.pendingNetPols.set(due);
            // Before the start the first whole state is being gathered, to go as one batch (flushNow).
            if (started && c.background() && (c.adaptive() || due >= c.maxPendingNetPols()) && !wakeQueued) {
                wakeQueued = true;
                wake = true;
            }
        }
        if (!c.background()) {
            flushNow();
        } else if (wake) {
            scheduler.soon(this::flushQuietly);
        }
    }

    /** Applies every change that is due, now, in the caller's thread. */
    public FlushResult flushNow() {
        flushing.lock();
        try {
            return flush();
        } finally {
            flushing.unlock();
        }
    }

    private void flushQuietly() {
        try {
            flushNow();
        } catch (RuntimeException e) {
            // A bug, not a refusal (those are handled): keep the flusher alive and say so loudly.
            LOG.log(System.Logger.Level.ERROR, "batch flush failed unexpectedly", e);
        }
    }

    private FlushResult flush() {
        DesiredDelta due;
        List<Event> window;
        synchronized (lock) {
            wakeQueued = false; // this flush takes everything due: what arrives from now on needs a wake-up of its own
            due = failures.isEmpty() ? pending.takeAll() : pending.takeDue(this::isDue);
            if (due.isEmpty() && events.isEmpty()) {
                return FlushResult.NOTHING; // a wake-up that an earlier flush served
            }
            window = new ArrayList<>(events);
            events.clear();
            inFlight = !window.isEmpty();
        }
        Batch batch = new Batch(due);
        List<UnitFailure> refused = new ArrayList<>();
        boolean whole = true;
        if (!batch.isEmpty()) {
            long start = System.nanoTime();
            try {
                backend.apply(batch);
                landed(batch);
            } catch (RuntimeException thrown) {
                // Whatever a backend throws is a refusal: the batch is retried part by part, never lost.
                BackendException wholeBatch = refusal(thrown);
                whole = false;
                List<Batch.Unit> units = batch.units();
                if (units.size() == 1) {
                    refused.add(refuse(units.get(0), wholeBatch)); // nothing to isolate: it was the one part
                    units = List.of();
                } else {
                    LOG.log(System.Logger.Level.WARNING, "{0}: batch of {1} parts refused ({2}); applying it part by part",
                            backend.name(), units.size(), wholeBatch.getMessage());
                }
                for (Batch.Unit unit : units) {
                    try {
                        backend.apply(unit.batch());
                        landed(List.of(unit.key()));
                    } catch (RuntimeException e) {
                        refused.add(refuse(unit, refusal(e)));
                    }
                }
            }
            metrics.applyLatency.labelValues(backend.name()).observe(Metrics.secondsSince(start));
            metrics.batchSize.observe(batch.policyChanges());
        }
        Instant now = clock.instant();
        synchronized (lock) {
            for (Iterator<Event> it = window.iterator(); it.hasNext(); ) {
                Event e = it.next();
                if (!pending.holdsAnyOf(e.delta())) {
                    Duration delay = Duration.between(e.received(), now);
                    metrics.policyApplyDelay.observe(delay.toNanos() / 1e9);
                    enforced.accept(delay);
                    it.remove();
                }
            }
            events.addAll(0, window); // still waiting for a refused or delayed part
            inFlight = false;
            // A refused change that a newer one undid has nothing left to retry.
            failures.keySet().removeIf(unit -> !pending.holds(unit));
            exportFailing();
            metrics.pendingNetPols.set(pending.policies(this::isDue));
        }
        policiesInKernel = backend.status().policies();
        metrics.numPolicies.set(policiesInKernel);
        return new FlushResult(batch.policyChanges(), batch.delta().size(), whole && refused.isEmpty(), refused);
    }

    private static BackendException refusal(RuntimeException thrown) {
        if (thrown instanceof BackendException b) {
            return b;
        }
        LOG.log(System.Logger.Level.ERROR, "backend failed unexpectedly; treated as a refusal", thrown);
        return new BackendException(thrown.toString(), "", thrown);
    }

    /** A whole batch landed: its parts are no longer failing (splitting it into parts only if some were). */
    private void landed(Batch batch) {
        synchronized (lock) {
            if (failures.isEmpty()) {
                return;
            }
        }
        landed(batch.units().stream().map(Batch.Unit::key).toList());
    }

    private void landed(Collection<Batch.UnitKey> units) {
        synchronized (lock) {
            units.forEach(failures::remove);
            exportFailing();
        }
    }

    private UnitFailure refuse(Batch.Unit unit, BackendException e) {
        Instant now = clock.instant();
        UnitFailure failure;
        boolean changed;
        synchronized (lock) {
            pending.addOlder(unit.batch().delta());
            UnitFailure before = failures.get(unit.key());
            int attempts = before == null ? 1 : before.attempts() + 1;
            failure = new UnitFailure(unit.key(), e.getMessage(), attempts, now.plus(retry.delayAfter(attempts)));
            failures.put(unit.key(), failure);
            exportFailing();
            changed = before == null || !before.error().equals(failure.error());
        }
        metrics.applyFailures.labelValues(unit.key().kind()).inc();
        LOG.log(System.Logger.Level.ERROR, "{0}: {1} refused: {2} (attempt {3}, next try at {4})",
                backend.name(), unit.key(), e.getMessage(), failure.attempts(), failure.retryAt());
        if (changed) {
            logRefusedInput(unit.key(), e);
        }
        return failure;
    }

    /** The parts refused now, per kind (each kind, 0 included, so a kind that stops failing reads 0). Call holding the lock. */
    private void exportFailing() {
        Map<String, Integer> byKind = new HashMap<>();
        failures.keySet().forEach(unit -> byKind.merge(unit.kind(), 1, Integer::sum));
        for (String kind : Batch.UnitKey.KINDS) {
            metrics.applyFailingParts.labelValues(kind).set(byKind.getOrDefault(kind, 0));
        }
    }

    /** The refused input a failure carries, at most {@link #MAX_LOGGED_INPUT} characters: once per failure, not per retry. */
    private void logRefusedInput(Batch.UnitKey unit, BackendException e) {
        String input = e.input();
        if (input == null || input.isEmpty()) {
            return;
        }
        String shown = input.length() <= MAX_LOGGED_INPUT ? input
                : input.substring(0, MAX_LOGGED_INPUT) + "\n... (" + (input.length() - MAX_LOGGED_INPUT) + " more characters)";
        LOG.log(System.Logger.Level.WARNING, "{0}: the input refused for {1} ({2}):\n{3}", backend.name(), unit, e.getMessage(), shown);
    }

    /** Whether a part may be applied now: it is not waiting out a retry delay. Call holding the lock. */
    private boolean isDue(Batch.UnitKey unit) {
        UnitFailure f = failures.get(unit);
        return f == null || !clock.instant().isBefore(f.retryAt());
    }

    /** Policy changes waiting (including those waiting for a retry). */
    public int pendingPolicies() {
        synchronized (lock) {
            return pending.policies(u -> true);
        }
    }

    /** Parts currently refused, with the kernel's last words. */
    public List<UnitFailure> failures() {
        synchronized (lock) {
            return List.copyOf(failures.values());
        }
    }

    /** Whether nothing waits: every event so far is in the kernel. */
    public boolean idle() {
        synchronized (lock) {
            return pending.isEmpty() && events.isEmpty() && !inFlight;
        }
    }

    /** Stops the flusher after one last flush of what is due. */
    @Override
    public void close() {
        flushQuietly();
        scheduler.close();
    }
}
