package io.npmagent.dataplane.backend;

import io.npmagent.dataplane.desired.Change;
import io.npmagent.dataplane.desired.CompiledClusterPolicy;
import io.npmagent.dataplane.desired.CompiledPolicy;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.PeerSetKey;
import io.npmagent.dataplane.flow.ReplayedFlows;
import io.npmagent.dataplane.model.PolicyKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A backend that keeps the applied state in memory with the kernel's own checks: a batch whose rules
 * name a set that does not exist is refused, and a refused batch changes nothing. Tests, dry runs and
 * the scale pipeline use it where no kernel is wanted. It also checks the queue: every change's
 * {@code before} must be what it holds, or the batch is refused as a bug.
 *
 * <p>{@link #rejectWhen} makes it refuse batches that touch chosen objects, as a kernel would refuse
 * a bad rule: the way to test isolation of one bad policy among many.
 */
public final class FakeBackend implements Backend {
    private final ReplayedFlows flows = new ReplayedFlows();
    private DesiredState state = DesiredState.EMPTY;
    private final List<Batch> applied = new ArrayList<>();
    private Predicate<Batch.UnitKey> reject = key -> false;
    private int refused;
    private int reconciles;
    private int quickReconciles;

    @Override
    public String name() {
        return "fake";
    }

    /** Refuse every batch that holds a change to an object {@code reject} accepts. */
    public synchronized FakeBackend rejectWhen(Predicate<Batch.UnitKey> reject) {
        this.reject = Objects.requireNonNull(reject);
        return this;
    }

    @Override
    public synchronized void apply(Batch batch) {
        for (Batch.Unit unit : batch.units()) {
            if (reject.test(unit.key())) {
                refused++;
                throw new BackendException("fake kernel: refused " + unit.key(), batch.delta().toString());
            }
        }
        checkBefore(batch.delta());
        DesiredState next = state.apply(batch.delta());
        for (Map.Entry<PolicyKey, CompiledPolicy> e : next.policies().entrySet()) {
            refuseMissingSets("policy " + e.getKey(), e.getValue().peerSets(), next);
        }
        for (Map.Entry<String, CompiledClusterPolicy> e : next.clusterPolicies().entrySet()) {
            refuseMissingSets("ClusterNetworkPolicy " + e.getKey(), e.getValue().peerSets(), next);
        }
        state = next;
        applied.add(batch);
    }

    private void refuseMissingSets(String what, Set<PeerSetKey> sets, DesiredState next) {
        for (PeerSetKey set : sets) {
            if (!next.peerSets().containsKey(set)) {
                refused++;
                throw new BackendException("fake kernel: " + what + " names missing set " + set, "");
            }
        }
    }

    private void checkBefore(DesiredDelta d) {
        check("identity", d.identities(), state.identities());
        check("address", d.addresses(), state.addresses());
        check("policy", d.policies(), state.policies());
        check("ClusterNetworkPolicy", d.clusterPolicies(), state.clusterPolicies());
        check("pod", d.pods(), state.pods());
        d.peerSets().forEach((k, present) -> {
            if (present == state.peerSets().containsKey(k)) {
                throw new IllegalStateException("queue bug: set " + k + " already " + (present ? "present" : "absent"));
            }
        });
        d.members().forEach((m, present) -> {
            boolean has = state.peerSets().containsKey(m.set()) && state.peerSets().get(m.set()).contains(m.identity());
            if (present == has) {
                throw new IllegalStateException("queue bug: member " + m + " already " + (present ? "present" : "absent"));
            }
        });
    }

    private static <K, V> void check(String what, Map<K, Change<V>> changes, Map<K, V> held) {
        changes.forEach((k, c) -> {
            if (!Objects.equals(c.before(), held.get(k))) {
                throw new IllegalStateException("queue bug: " + what + " " + k + " changes from " + c.before()
                        + " but the backend holds " + held.get(k));
            }
        });
    }

    @Override
    public synchronized int reconcile() {
        reconciles++;
        return 0;
    }

    @Override
    public synchronized int quickReconcile() {
        quickReconciles++;
        return 0;
    }

    /** How many full and quick reconciles ran: nothing drifts here, but their cadence is the queue's. */
    public synchronized List<Integer> reconcileCounts() {
        return List.of(reconciles, quickReconciles);
    }

    @Override
    public synchronized void uninstall() {
        state = DesiredState.EMPTY;
    }

    @Override
    public synchronized BackendStatus status() {
        long members = state.peerSets().values().stream().mapToLong(Set::size).sum();
        return new BackendStatus(name(), state.policies().size() + state.clusterPolicies().size(), 0, state.peerSets().size(), members);
    }

    /** What it holds now. */
    /** Its flow source: tests hand it the reports a kernel would make. */
    @Override
    public ReplayedFlows flows() {
        return flows;
    }

    public synchronized DesiredState state() {
        return state;
    }

    /** Every batch it accepted, in order. */
    public synchronized List<Batch> batches() {
        return List.copyOf(applied);
    }

    public synchronized Batch lastBatch() {
        return applied.isEmpty() ? null : applied.get(applied.size() - 1);
    }

    /** Batches refused, by {@link #rejectWhen} or by its checks. */
    public synchronized int refused() {
        return refused;
    }

    /** A stable listing of what it holds. */
    public synchronized String dump() {
        return state.dump();
    }
}
