package io.npmagent.iptables;

import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.exec.CommandRunner;
import io.npmagent.dataplane.backend.BackendException;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.flow.AttributionRefs;
import io.npmagent.dataplane.flow.FlowSource;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.iptables.flow.CountedFlow;
import io.npmagent.iptables.flow.FlowMarks;
import io.npmagent.iptables.flow.NetfilterFlows;
import io.npmagent.iptables.model.Names;
import io.npmagent.iptables.model.NetfilterModel;
import java.util.Map;

/**
 * The one state machine of the netfilter backends ({@link IptablesBackend}, {@code NftBackend}): what
 * happens to a batch, a reconcile and a refusal. A subclass only reads its kernel objects back and
 * writes the difference the way its tools want.
 *
 * <p><b>A batch's atomicity</b> (decided here, in {@link #apply}, for both netfilter backends): a batch
 * lands whole or is taken back whole. The {@link NetfilterModel} takes the batch and says what may have
 * changed; {@link #write} compares exactly that with what the kernel is believed to hold and writes the
 * difference (nft: one transaction, so packets never see part of a batch; iptables: ipset, then each
 * family's restore, then destroys, so for those milliseconds they may). On a refusal:
 * <ol>
 *   <li>if the kernel no longer holds what was believed (someone edited it by hand, and a stale belief
 *       can make a write fail), it is read back and the batch is tried once more as a full comparison
 *       against what is really there; if that lands, so did the batch;</li>
 *   <li>otherwise the model takes the inverse batch and the same comparison runs again over what both
 *       touched: it writes back whatever part of the batch had reached the kernel (nothing, where a write
 *       is one transaction) and frees the names of objects that are gone again. The batch counts as
 *       refused, in the tool's own words, and the model holds what it held before it.</li>
 * </ol>
 * If even that fails, the next call reads the kernel back and compares everything. What happens to the
 * refused batch next (part by part, retries) is the queue's: "A batch's retry and isolation" in
 * {@code dataplane}'s {@link io.npmagent.dataplane.batch.BatchQueue}.
 *
 * <p><b>Restart.</b> The first call reads back the agent's objects (whatever run made them) and writes
 * only what differs from the first batch, which holds the whole desired state: nothing is flushed
 * first, so no pod is open for an instant. {@link #reconcile} does the same later, to repair drift.
 *
 * <p>Not thread-safe beyond its own {@code synchronized} entry points: the batch queue's flush thread
 * and the reconcile timer call them.
 */
public abstract class NetfilterBackend implements Backend {
    private static final System.Logger LOG = System.getLogger(NetfilterBackend.class.getName());

    protected final NetfilterModel model = new NetfilterModel();
    /** The names the kernel objects go by, claimed as they are written (a hash collision is refused, not merged). */
    protected final Names names = new Names();
    protected final Metrics metrics;
    /** What rendering writes beside each policy drop (flow verdicts): this instance's attribution numbers, the log rules' settings. */
    protected final FlowMarks flowMarks = new FlowMarks(new AttributionRefs());
    private NetfilterFlows flowSource;
    /** False until the kernel has been read back and fully compared (first call, or after a failed repair). */
    private boolean inSync;

    /** What runs this backend's commands, and where. */
    protected abstract CommandRunner runner();

    protected NetfilterBackend(Metrics metrics) {
        this.metrics = metrics;
    }

    // ---- what a subclass does its own way -------------------------------------------------------------

    /** Forgets what it believed the kernel holds and reads the agent's objects back. */
    protected abstract void readBack();

    /**
     * Writes, of the objects {@code dirty} names, whatever differs from what the kernel is believed to
     * hold, and believes it once written; with {@code full}, every object the kernel holds is compared
     * and the agent's objects nothing wants any more (orphans of any run) go. Claims the names of the
     * objects the model holds and releases the others'. Returns how many objects it changed.
     */
    protected abstract int write(NetfilterModel.Dirty dirty, boolean full, String operation);

    /** The few listings that show a flushed table or a hand edit of the entry points: whether they are as written. */
    protected abstract boolean entryPointsAsWritten();

    /**
     * After a refused write: whether the kernel holds other than what was believed, so that the refusal
     * may come from the stale belief. Only a kernel whose writes a stale belief can make fail needs to
     * look; the default says no.
     */
    protected boolean kernelDiffersFromBelief() {
        return false;
    }

    /** Removes every kernel object of the agent's. */
    protected abstract void removeAll();

    /** Every element of the flow sets, with its counters (flow verdicts' summaries). */
    protected abstract CountedFlow.Reading readFlowCounters();

    // ---- flow verdicts --------------------------------------------------------------------------------

    /**
     * Denied flows from NFLOG and the flow sets' counters ({@link NetfilterFlows}), decoded with the
     * numbers this backend's rendering wrote. Starting it with settings that change what is rendered
     * (flows off, another rate) re-renders every chain (a {@link #reconcile}).
     */
    @Override
    public synchronized NetfilterFlows flows() {
        if (flowSource == null) {
            flowSource = new NetfilterFlows(name(), flowMarks, this::readFlowCounters, this::reconcile);
            String netns = runner().netns();
            if (netns != null) {
                flowSource.inNamespace(netns); // NFLOG is per namespace: read where the rules run
            }
        }
        return flowSource;
    }

    @Override
    public void close() {
        NetfilterFlows f;
        synchronized (this) {
            f = flowSource;
        }
        if (f != null) {
            f.close();
        }
    }

    // ---- the state machine ----------------------------------------------------------------------------

    @Override
    public final synchronized void apply(Batch batch) {
        model.apply(batch.delta());
        NetfilterModel.Dirty dirty = model.takeDirty();
        try {
            if (inSync) {
                write(dirty, false, "apply");
            } else {
                fullSync("apply");
            }
        } catch (BackendException | Names.NameCollisionException refused) {
            if (refused instanceof BackendException b && repairedStaleBelief(b)) {
                return;
            }
            model.apply(batch.delta().inverse());
            NetfilterModel.Dirty undo = model.takeDirty();
            if (inSync) {
                try {
                    write(dirty.plus(undo), false, "apply");
                } catch (BackendException | Names.NameCollisionException e) {
                    inSync = false;
                    LOG.log(System.Logger.Level.WARNING, "{0}: could not put back a refused batch ({1}); the next call compares everything",
                            name(), e.getMessage());
                }
            }
            if (refused instanceof BackendException b) {
                throw b;
            }
            throw new BackendException(refused.getMessage(), "");
        } finally {
            updateGauges();
        }
    }

    /** After a refusal: if the kernel drifted from what was believed, the batch is tried again as a full comparison. Returns true if that landed it. */
    private boolean repairedStaleBelief(BackendException refused) {
        if (!inSync) {
            return false; // that was already a full comparison against a fresh read
        }
        try {
            if (!kernelDiffersFromBelief()) {
                return false;
            }
            fullSync("apply");
            LOG.log(System.Logger.Level.INFO, "{0}: the kernel had been changed by hand; repaired with the batch", name());
            return true;
        } catch (BackendException | Names.NameCollisionException e) {
            inSync = false; // drift remains outside the batch: the next call compares everything
            LOG.log(System.Logger.Level.WARNING, "{0}: could not look for drift behind a refusal, or repair it: {1} (the refusal: {2})",
                    name(), e.getMessage(), refused.getMessage());
            return false;
        }
    }

    @Override
    public final synchronized int reconcile() {
        try {
            return fullSync("reconcile");
        } finally {
            updateGauges();
        }
    }

    @Override
    public final synchronized int quickReconcile() {
        try {
            return inSync && entryPointsAsWritten() ? 0 : fullSync("reconcile");
        } finally {
            updateGauges();
        }
    }

    @Override
    public final synchronized void uninstall() {
        try {
            removeAll();
        } finally {
            inSync = false;
            updateGauges();
        }
    }

    /** Reads back, compares every object, writes the difference; returns how many objects it changed. */
    protected final int fullSync(String operation) {
        readBack();
        names.clear(); // claimed again below for every object that exists
        int changed = write(new NetfilterModel.Dirty(model.sets(), Map.of(), model.chains()), true, operation);
        inSync = true;
        return changed;
    }

    private void updateGauges() {
        metrics.kernelHolds(status());
    }
}
