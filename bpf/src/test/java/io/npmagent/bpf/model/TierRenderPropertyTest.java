package io.npmagent.bpf.model;

import io.npmagent.dataplane.desired.StateDiff;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.DesiredStateInterpreter;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Protocol;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * Random states with ClusterNetworkPolicies (Admin and Baseline lists in random orders, Pass, Accept and
 * Deny, names the backend does not hold, NetworkPolicies isolating or not, selector and ipBlock peers
 * covering pods, port ranges, named ports resolved on the destination), rendered and read back as the
 * programs read them ({@link RenderedInterpreter}), judge every connection as the walk by address does
 * ({@link TierStates#allowed}), which dataplane's {@link DesiredStateInterpreter} agrees with; after each
 * of three states applied as deltas, the render equals one from scratch.
 */
class TierRenderPropertyTest {

    @Property(tries = 300)
    void renderedVerdictsJudgeLikeTheWalk(@ForAll long seed) {
        BpfModel model = new BpfModel();
        DesiredState before = DesiredState.EMPTY;
        for (int step = 0; step < 3; step++) {
            DesiredState now = TierStates.random(seed + step);
            model.apply(step == 0 ? DesiredDelta.of(now) : StateDiff.between(before, now));
            Rendered r = model.render();
            boolean rowsToo = check(now, r, "seed " + seed + " step " + step);
            net.jqwik.api.statistics.Statistics.label("dataplane's interpreter read the state too").collect(rowsToo);
            assertThat(new HashMap<>(r.policy())).as("incremental equals from scratch").isEqualTo(new HashMap<>(model.renderFromScratch().policy()));
            before = now;
        }
        model.apply(StateDiff.between(before, DesiredState.EMPTY));
        assertThat(model.render().policy()).as("nothing left").isEmpty();
    }

    /** Returns whether dataplane's interpreter was asked too. */
    static boolean check(DesiredState s, Rendered r, String what) {
        RenderedInterpreter maps = new RenderedInterpreter(r);
        // dataplane's interpreter reads only states the compiler can emit: every NetworkPolicy a pod lists held, isolating it
        DesiredStateInterpreter rows = s.pods().values().stream().allMatch(pod -> java.util.Arrays.stream(
                io.npmagent.dataplane.model.Direction.values()).allMatch(d -> pod.policies(d).stream()
                .allMatch(k -> s.policies().containsKey(k) && s.policies().get(k).isolates(d)))) ? new DesiredStateInterpreter(s) : null;
        List<IpAddress> all = new ArrayList<>(List.of(TierStates.PODS));
        all.addAll(List.of(TierStates.OUTSIDE));
        all.removeIf(ip -> r.node().containsKey(io.npmagent.dataplane.model.Cidr.host(ip))); // the walk by address knows no node
        List<Protocol> protocols = new ArrayList<>(List.of(Protocol.values()));
        protocols.add(null); // ICMP: no ports
        for (IpAddress src : all) {
            for (IpAddress dst : all) {
                if (src.equals(dst)) {
                    continue;
                }
                for (Protocol p : protocols) {
                    for (int port : p == null ? List.of(0) : TierStates.PORTS) {
                        boolean want = TierStates.allowed(s, src, dst, p, port);
                        if (p != null && rows != null) {
                            assertThat(rows.allowed(src, dst, port, p)).as("%s: dataplane's interpreter agrees with the walk here: %s -> %s %s/%d",
                                    what, src, dst, p, port).isEqualTo(want);
                        }
                        assertThat(maps.allowed(src, dst, p == null ? 1 : p.ipProtocolNumber(), port))
                                .as(() -> String.format("%s: %s -> %s %s/%d%n%s", what, src, dst, p, port, s.dump())).isEqualTo(want);
                    }
                }
            }
        }
        return rows != null;
    }
}
