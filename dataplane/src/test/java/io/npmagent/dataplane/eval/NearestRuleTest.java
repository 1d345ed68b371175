package io.npmagent.dataplane.eval;

import static io.npmagent.dataplane.model.PolicyFixtures.block;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.named;
import static io.npmagent.dataplane.model.PolicyFixtures.namespaces;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.pods;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.port;
import static io.npmagent.dataplane.model.PolicyFixtures.ports;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Pod;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The rule of an isolating policy that came closest to admitting a default-denied flow, on the evaluator's small cluster. */
class NearestRuleTest {
    private static final IpAddress XA = IpAddress.parse("10.1.0.1");
    private static final IpAddress XB = IpAddress.parse("10.1.0.2");
    private static final IpAddress YA = IpAddress.parse("10.2.0.1");
    private static final IpAddress YC = IpAddress.parse("10.2.0.3");
    private static final int TCP = 6;

    private static NearestRule with(NetworkPolicy... policies) {
        List<ClusterEvent> events = new ArrayList<>(ReferenceEvaluatorTest.TWO_NAMESPACES);
        for (NetworkPolicy p : policies) {
            events.add(new ClusterEvent.PolicyUpserted(p));
        }
        return new NearestRule(NearestRule.of(ClusterState.EMPTY.applyAll(events)));
    }

    private static List<PolicyKey> keys(String... namespacedNames) {
        return List.of(namespacedNames).stream().map(n -> new PolicyKey(n.split("/")[0], n.split("/")[1])).toList();
    }

    @Test
    void aRuleWhosePeerMatchesButNotItsPortSaysWhichPortsItAdmits() {
        NearestRule finder = with(policy("x", "allow-web").ingress(rule(peers(namespaces(match("team", "b"))), ports(port("TCP", 80)))).build());
        assertThat(finder.nearest(Direction.INGRESS, keys("x/allow-web"), YA, XA, TCP, 8080))
                .isEqualTo("x/allow-web spec.ingress[0] admits the peer but not TCP/8080 (its ports: TCP/80)");
        assertThat(finder.nearest(Direction.INGRESS, keys("x/allow-web"), YA, XA, 17, 80))
                .as("the right number over the wrong protocol").isEqualTo("x/allow-web spec.ingress[0] admits the peer but not UDP/80 (its ports: TCP/80)");
    }

    @Test
    void aRuleWhosePortMatchesButNotItsPeerNamesThePeer() {
        NearestRule finder = with(policy("x", "allow-web").ingress(rule(peers(pods(match("role", "client"))), ports(port("TCP", 80)))).build());
        assertThat(finder.nearest(Direction.INGRESS, keys("x/allow-web"), YC, XA, TCP, 80))
                .startsWith("x/allow-web spec.ingress[0] admits TCP/80 but not the peer y/c (10.2.0.3) (its peers: ")
                .contains("role");
    }

    @Test
    void aPeerMissBeatsAPortMissOnlyWhenNoRuleHasThePeer() {
        NearestRule finder = with(policy("x", "p")
                .ingress(rule(peers(pods(match("pod", "nobody"))), ports(port("TCP", 80))),
                        rule(peers(namespaces(match("team", "b"))), ports(port("TCP", 443)))).build());
        assertThat(finder.nearest(Direction.INGRESS, keys("x/p"), YA, XA, TCP, 80))
                .as("the second rule has the peer; a missing port is the likelier mistake")
                .startsWith("x/p spec.ingress[1] admits the peer but not TCP/80");
    }

    @Test
    void nothingNearWhenNoRuleMatchesEitherHalf() {
        NearestRule finder = with(policy("x", "p").ingress(rule(peers(pods(match("pod", "nobody"))), ports(port("TCP", 443)))).build());
        assertThat(finder.nearest(Direction.INGRESS, keys("x/p"), YA, XA, TCP, 80)).isNull();
        assertThat(with(policy("x", "deny-all").build()).nearest(Direction.INGRESS, keys("x/deny-all"), YA, XA, TCP, 80))
                .as("a policy with no rules").isNull();
    }

    @Test
    void egressLooksAtTheDestinationAsThePeerAndNamedPortsOnIt() {
        NearestRule finder = with(policy("x", "out").types("Egress")
                .egress(rule(peers(block("10.2.0.0/16")), ports(named("TCP", "http")))).build());
        // y/a serves http on 80: 8080 misses the named port, the ipBlock holds the address.
        assertThat(finder.nearest(Direction.EGRESS, keys("x/out"), XA, YA, TCP, 8080))
                .isEqualTo("x/out spec.egress[0] admits the peer but not TCP/8080 (its ports: TCP/http)");
        assertThat(finder.nearest(Direction.EGRESS, keys("x/out"), XA, XB, TCP, 8080))
                .as("x/b serves http on 8080 but lies outside the block")
                .startsWith("x/out spec.egress[0] admits TCP/8080 but not the peer x/b (10.1.0.2)");
    }

    @Test
    void onlyTheIsolatingPoliciesAndTheirDirectionCount() {
        NetworkPolicy other = policy("x", "other").ingress(rule(peers(namespaces(match("team", "b"))), ports(port("TCP", 80)))).build();
        NetworkPolicy egress = policy("x", "egress").types("Egress")
                .egress(rule(peers(namespaces(match("team", "b"))), ports(port("TCP", 80)))).build();
        NearestRule finder = with(other, egress);
        assertThat(finder.nearest(Direction.INGRESS, keys("x/egress"), YA, XA, TCP, 8080)).as("x/other is not named").isNull();
        assertThat(finder.nearest(Direction.INGRESS, keys("x/gone"), YA, XA, TCP, 8080)).as("a policy deleted since").isNull();
    }

    @Test
    void aRuleThatAdmitsNowSaysThePolicyChanged() {
        NearestRule finder = with(policy("x", "p").ingress(rule(peers(namespaces(match("team", "b"))), ports(port("TCP", 80)))).build());
        assertThat(finder.nearest(Direction.INGRESS, keys("x/p"), YA, XA, TCP, 80)).contains("admits it as the policy is now");
    }

    @Test
    void aProtocolWithoutPortsMatchesOnlyRulesOfEveryPort() {
        NearestRule finder = with(policy("x", "p").ingress(rule(peers(namespaces(match("team", "b"))), ports(port("TCP", 80)))).build());
        assertThat(finder.nearest(Direction.INGRESS, keys("x/p"), YA, XA, 1, 0))
                .isEqualTo("x/p spec.ingress[0] admits the peer but not protocol 1 (its ports: TCP/80)");
    }

    @Test
    void untrustedNamesReachTheTextEscaped() {
        List<ClusterEvent> events = new ArrayList<>(ReferenceEvaluatorTest.TWO_NAMESPACES);
        events.add(new ClusterEvent.PodUpserted(Pod.builder("y", "evil\u001b[31m").ip("10.2.0.9").build()));
        events.add(new ClusterEvent.PolicyUpserted(policy("x", "p").ingress(rule(peers(pods(match("role", "client"))), ports(port("TCP", 80)))).build()));
        NearestRule finder = new NearestRule(NearestRule.of(ClusterState.EMPTY.applyAll(events)));
        String text = finder.nearest(Direction.INGRESS, keys("x/p"), IpAddress.parse("10.2.0.9"), XA, TCP, 80);
        assertThat(text).contains("not the peer y/evil").doesNotContain("\u001b");
    }
}
