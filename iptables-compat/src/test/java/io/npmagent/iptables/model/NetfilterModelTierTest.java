package io.npmagent.iptables.model;

import io.npmagent.dataplane.desired.StateDiff;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.desired.DesiredState;
import io.npmagent.dataplane.desired.TierPolicies;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.dataplane.tier.RuleAction;
import io.npmagent.iptables.IptablesBackendContract;
import io.npmagent.iptables.TierFixtures;
import io.npmagent.iptables.TierOverlay;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the model makes of ClusterNetworkPolicy rows: the steps of a pod chain, which chains and sets exist, dispatch. */
class NetfilterModelTierTest {
    private final PolicyCompiler compiler = new PolicyCompiler(null);
    private final NetfilterModel model = new NetfilterModel();
    private DesiredState applied = DesiredState.EMPTY;

    NetfilterModelTierTest() {
        for (ClusterEvent e : IptablesBackendContract.cluster()) {
            compiler.apply(e);
        }
    }

    private void apply(TierOverlay overlay) {
        DesiredState next = overlay.over(compiler.snapshot());
        DesiredDelta delta = StateDiff.between(applied, next);
        model.apply(delta);
        model.takeDirty();
        applied = next;
    }

    private static ChainId.PodChain pod(String name, Direction d) {
        return new ChainId.PodChain(new PodKey("x", name), d, Family.IPV4);
    }

    private static ChainId.ClusterPolicyChain cnp(String name, Direction d) {
        return new ChainId.ClusterPolicyChain(name, d, Family.IPV4);
    }

    @Test
    void adminStopsAtThePolicyNotHeldAndSkipsOnesWithoutRulesThere() {
        apply(TierFixtures.overlay()
                .policy("egress-only", List.of(), List.of(TierOverlay.rule(0, RuleAction.DENY, List.of(), List.of())))
                .tiers(TierFixtures.WEB, new TierPolicies(
                        List.of("egress-only", "adm-first", "late", "adm-second"), List.of(), List.of("base"), List.of())));

        NetfilterModel.PodSteps steps = model.steps(pod("web", Direction.INGRESS));
        assertThat(steps.tiered()).isTrue();
        assertThat(steps.admin()).containsExactly("adm-first");
        assertThat(steps.adminFailsClosed()).isTrue();
        assertThat(steps.isolated()).isTrue();
        assertThat(steps.policies()).containsExactly(new PolicyKey("x", "web"));
        assertThat(steps.baseline()).as("isolated: Baseline is never reached").isEmpty();
        assertThat(steps.baselineFailsClosed()).isFalse();
        assertThat(model.exists(cnp("egress-only", Direction.INGRESS))).as("no ingress rules, no ingress chain").isFalse();
        assertThat(model.exists(cnp("adm-second", Direction.INGRESS))).as("listed after one not held: kept meanwhile").isTrue();
    }

    @Test
    void aPodJudgedOnlyByATierIsDispatchedAndItsChainsAndSetsGoWithIt() {
        apply(TierFixtures.overlay());
        ChainId.Dispatch ingress = new ChainId.Dispatch(Direction.INGRESS, Family.IPV4);
        assertThat(model.dispatch(ingress)).as("api is not isolated for ingress, but tiers judge it")
                .containsKey(IpAddress.parse("10.0.0.2"));
        assertThat(model.steps(pod("api", Direction.INGRESS)).baseline()).containsExactly("base");
        assertThat(model.exists(cnp("base", Direction.EGRESS))).as("api's egress is isolated: its Baseline is never reached").isFalse();
        assertThat(model.sets()).anyMatch(s -> s instanceof SetId.Cidr c && c.key().equals(TierFixtures.cidr("192.0.2.0/24")));

        apply(new TierOverlay());
        assertThat(model.dispatch(ingress)).doesNotContainKey(IpAddress.parse("10.0.0.2"));
        assertThat(model.chains()).noneMatch(c -> c instanceof ChainId.ClusterPolicyChain);
        assertThat(model.sets()).noneMatch(s -> s instanceof SetId.Cidr c && c.key().equals(TierFixtures.cidr("192.0.2.0/24")));
        assertThat(model.steps(pod("web", Direction.INGRESS)).tiered()).isFalse();
    }
}
