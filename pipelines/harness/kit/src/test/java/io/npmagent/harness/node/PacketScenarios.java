package io.npmagent.harness.node;

import static io.npmagent.dataplane.model.ClusterPolicyFixtures.accept;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.admin;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.baseline;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.deny;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.from;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.inNamespaces;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.networks;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.pass;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.podsIn;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.tcp;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.to;
import static io.npmagent.dataplane.model.PolicyFixtures.block;
import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.named;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.pods;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.port;
import static io.npmagent.dataplane.model.PolicyFixtures.ports;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.desired.DesiredStateInterpreter;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.dataplane.eval.ClusterRuleRef;
import io.npmagent.dataplane.flow.Attribution;
import io.npmagent.dataplane.flow.DropReason;
import io.npmagent.dataplane.flow.FlowFilter;
import io.npmagent.dataplane.flow.FlowLog;
import io.npmagent.dataplane.flow.FlowRecord;
import io.npmagent.dataplane.flow.FlowSettings;
import io.npmagent.dataplane.flow.FlowVerdict;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.Tier;
import io.npmagent.dataplane.tier.RuleAction;
import java.time.Duration;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.LabelSelector;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.policy.PolicyCompiler;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;

/**
 * The same stories told to every backend, with real packets: pods a, b and c of a {@link PodNetwork},
 * TCP connects on both families. Each step states which pairs must not connect (all others must),
 * and the desired state read without any kernel ({@link DesiredStateInterpreter}) must agree.
 */
public final class PacketScenarios {
    private final PodNetwork net;
    private final PolicyCompiler compiler = new PolicyCompiler(null);
    private Backend backend;

    private PacketScenarios(PodNetwork net, Backend backend) {
        this.net = net;
        this.backend = backend;
        apply(new ClusterEvent.NamespaceUpserted(new Namespace("x", labels())));
        for (String name : new String[] {"a", "b", "c"}) {
            apply(new ClusterEvent.PodUpserted(pod(name, name)));
        }
    }

    /**
     * Isolation, admission by label and port, a pod taking another's labels and giving them back,
     * egress against ingress, and everything removed again; then a reconcile finds nothing to repair.
     */
    public static void policiesDecideWhichConnectionsGetThrough(PodNetwork net, Backend backend) {
        PacketScenarios s = new PacketScenarios(net, backend);
        s.expectBlocked("no policy");

        s.apply(new ClusterEvent.PolicyUpserted(policy("x", "deny-b").select(match("app", "b")).types("Ingress").build()));
        // b's own connections still get their replies back; a and c still talk to each other.
        s.expectBlocked("default-deny ingress on b", "a->b", "c->b");

        s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-to-b").select(match("app", "b"))
                .ingress(rule(peers(pods(match("app", "a"))), ports(port("TCP", PodNetwork.PORT)))).build()));
        s.expectBlocked("b admits a", "c->b");

        s.apply(new ClusterEvent.PodUpserted(s.pod("c", "a")));
        s.expectBlocked("c has a's labels now");
        s.apply(new ClusterEvent.PodUpserted(s.pod("c", "c")));
        s.expectBlocked("and lost them again", "c->b");

        s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-egress").select(match("app", "a")).types("Egress")
                .egress(rule(peers(pods(match("app", "c"))), ports(port("TCP", PodNetwork.PORT)))).build()));
        // a may reach only c now, though b would admit it; connections to a still get their replies.
        s.expectBlocked("a may reach only c", "a->b", "c->b");

        for (String name : new String[] {"deny-b", "a-to-b", "a-egress"}) {
            s.apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", name)));
        }
        s.expectBlocked("policies removed");
        assertThat(backend.reconcile()).as("nothing to repair").isZero();
    }

    /**
     * ClusterNetworkPolicy tiers around NetworkPolicy, per direction: a Baseline Deny decides only where no
     * NetworkPolicy isolates; an Admin Deny overrides a NetworkPolicy's allow, an Admin Accept its
     * isolation; an Admin Pass skips the rest of the Admin tier, to NetworkPolicy or, where none isolates,
     * to Baseline; a priority edited live reorders the tier; an egress {@code networks} peer matches pod
     * addresses. Every Deny is silent (a connect times out rather than being refused).
     */
    public static void tiersDecideAroundNetworkPolicy(PodNetwork net, Backend backend) {
        PacketScenarios s = new PacketScenarios(net, backend);
        LabelSelector everyNamespace = match();
        s.apply(new ClusterEvent.ClusterPolicyUpserted(baseline("baseline-deny-b", 10).subjectPods(everyNamespace, match("app", "b"))
                .ingress(deny(from(inNamespaces(everyNamespace)))).build()));
        s.expectBlocked("Baseline denies b's ingress", "a->b", "c->b");

        s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-to-b").select(match("app", "b"))
                .ingress(rule(peers(pods(match("app", "a"))), ports(port("TCP", PodNetwork.PORT)))).build()));
        s.expectBlocked("a NetworkPolicy isolating b decides instead of Baseline", "c->b");

        s.apply(new ClusterEvent.ClusterPolicyUpserted(admin("admin-deny-a", 20).subjectPods(everyNamespace, match("app", "b"))
                .ingress(deny(from(podsIn(everyNamespace, match("app", "a"))))).build()));
        s.expectBlocked("an Admin Deny overrides the NetworkPolicy's allow", "a->b", "c->b");

        s.apply(new ClusterEvent.ClusterPolicyUpserted(admin("admin-pass-a", 10).subjectPods(everyNamespace, match("app", "b"))
                .ingress(pass(from(podsIn(everyNamespace, match("app", "a"))))).build()));
        s.expectBlocked("an Admin Pass tried first skips the Admin Deny: NetworkPolicy decides", "c->b");

        s.apply(new ClusterEvent.ClusterPolicyUpserted(admin("admin-deny-a", 5).subjectPods(everyNamespace, match("app", "b"))
                .ingress(deny(from(podsIn(everyNamespace, match("app", "a"))))).build()));
        s.expectBlocked("the Deny's priority edited to come first", "a->b", "c->b");

        s.apply(new ClusterEvent.ClusterPolicyUpserted(admin("admin-accept-c", 1).subjectPods(everyNamespace, match("app", "b"))
                .ingress(accept(from(podsIn(everyNamespace, match("app", "c"))), tcp(PodNetwork.PORT))).build()));
        s.expectBlocked("an Admin Accept overrides the NetworkPolicy's isolation", "a->b");

        s.apply(new ClusterEvent.ClusterPolicyUpserted(admin("pass-c-to-a", 10).subjectPods(everyNamespace, match("app", "a"))
                .ingress(pass(from(podsIn(everyNamespace, match("app", "c"))))).build()));
        s.apply(new ClusterEvent.ClusterPolicyUpserted(baseline("baseline-deny-c-to-a", 10).subjectPods(everyNamespace, match("app", "a"))
                .ingress(deny(from(podsIn(everyNamespace, match("app", "c"))))).build()));
        s.expectBlocked("a Pass where no NetworkPolicy isolates goes on to Baseline", "a->b", "c->a");

        s.apply(new ClusterEvent.ClusterPolicyUpserted(admin("a-not-to-c", 30).subjectPods(everyNamespace, match("app", "a"))
                .egress(deny(to(networks(net.address("c", false) + "/32", net.address("c", true) + "/128")))).build()));
        s.expectBlocked("an egress networks peer matches a pod's addresses", "a->b", "c->a", "a->c");

        s.apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "a-to-b")));
        for (String name : new String[] {"baseline-deny-b", "admin-deny-a", "admin-pass-a", "admin-accept-c", "pass-c-to-a",
                "baseline-deny-c-to-a", "a-not-to-c"}) {
            s.apply(new ClusterEvent.ClusterPolicyDeleted(name));
        }
        s.expectBlocked("every policy removed");
        assertThat(backend.reconcile()).as("nothing to repair").isZero();
    }

    /**
     * A pod's own node (an address of the node, serving as a host-network pod would): NetworkPolicy never
     * cuts a pod from it, but a ClusterNetworkPolicy egress rule whose {@code networks} peer holds the
     * node's address judges the pod's connections to it, in tier order (an Admin Accept before a Deny, a
     * Pass on to NetworkPolicy, which admits the node, a Baseline Deny where no NetworkPolicy isolates);
     * the node's own connections to pods (kubelet's probes) stay open whatever the pods' policies.
     */
    public static void aPodsConnectionsToItsOwnNodeMeetClusterPolicies(PodNetwork net, Backend backend) {
        String[] node = {net.nodeAddress(false) + "/32", net.nodeAddress(true) + "/128"};
        PacketScenarios s = new PacketScenarios(net, backend);
        LabelSelector everyNamespace = match();
        s.expectNodeBlocked("no policy");

        s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-to-b").select(match("app", "a")).types("Egress")
                .egress(rule(peers(pods(match("app", "b"))), List.of())).build()));
        s.expectNodeBlocked("a NetworkPolicy isolating a's egress leaves its node alone");

        s.apply(new ClusterEvent.ClusterPolicyUpserted(admin("a-not-to-node", 20).subjectPods(everyNamespace, match("app", "a"))
                .egress(deny(to(networks(node)))).build()));
        s.apply(new ClusterEvent.ClusterPolicyUpserted(admin("nothing-into-c", 30).subjectPods(everyNamespace, match("app", "c"))
                .ingress(deny(from(inNamespaces(everyNamespace)))).build()));
        s.expectNodeBlocked("an Admin Deny to the node's address; the node still reaches c, which denies every pod", "a");

        s.apply(new ClusterEvent.ClusterPolicyUpserted(admin("a-to-node-port", 10).subjectPods(everyNamespace, match("app", "a"))
                .egress(accept(to(networks(node)), tcp(PodNetwork.PORT))).build()));
        s.expectNodeBlocked("an Admin Accept of the port tried before the Deny");

        s.apply(new ClusterEvent.ClusterPolicyUpserted(admin("a-to-node-port", 10).subjectPods(everyNamespace, match("app", "a"))
                .egress(pass(to(networks(node)))).build()));
        s.expectNodeBlocked("an Admin Pass before the Deny: the NetworkPolicy isolating a decides, and admits the node");

        s.apply(new ClusterEvent.ClusterPolicyUpserted(baseline("b-not-to-node", 10).subjectPods(everyNamespace, match("app", "b"))
                .egress(deny(to(networks(node)))).build()));
        s.expectNodeBlocked("a Baseline Deny where no NetworkPolicy isolates b", "b");

        s.apply(new ClusterEvent.PolicyUpserted(policy("x", "b-to-a").select(match("app", "b")).types("Egress")
                .egress(rule(peers(pods(match("app", "a"))), List.of())).build()));
        s.expectNodeBlocked("a NetworkPolicy isolating b decides instead of Baseline, and admits the node");

        s.apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "a-to-b")));
        s.apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "b-to-a")));
        for (String name : new String[] {"a-not-to-node", "nothing-into-c", "a-to-node-port", "b-not-to-node"}) {
            s.apply(new ClusterEvent.ClusterPolicyDeleted(name));
        }
        s.expectNodeBlocked("every policy removed");
        assertThat(backend.reconcile()).as("nothing to repair").isZero();
    }

    /** Drift, as others cause it, in a backend's own words. */
    public interface Tamper {
        /** Undoes what sends packets to or from pod b to its rules, as a flushed ruleset or a CNI would: b is open. */
        void unhookB(PodNetwork net);

        /** Empties what says which pod is which peer: a is no longer admitted anywhere (closed, not open). */
        void forgetPeers(PodNetwork net);
    }

    /**
     * b admits only a. The hook undone by hand opens b until a quick reconcile puts it back; peers
     * forgotten by hand close b to a until a full reconcile puts them back; then nothing is left to repair.
     */
    public static void driftIsRepaired(PodNetwork net, Backend backend, Tamper tamper) {
        PacketScenarios s = new PacketScenarios(net, backend);
        s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-to-b").select(match("app", "b"))
                .ingress(rule(peers(pods(match("app", "a"))), ports(port("TCP", PodNetwork.PORT)))).build()));
        s.expectBlocked("b admits a", "c->b");
        assertThat(backend.quickReconcile()).as("nothing drifted").isZero();

        tamper.unhookB(net);
        s.expectInKernel("b unhooked by hand: open");
        assertThat(backend.quickReconcile()).as("objects the quick reconcile repaired").isPositive();
        s.expectBlocked("after the quick reconcile", "c->b");

        tamper.forgetPeers(net);
        s.expectInKernel("peers forgotten by hand: closed", "a->b", "c->b");
        assertThat(backend.reconcile()).as("objects the full reconcile repaired").isPositive();
        s.expectBlocked("after the full reconcile", "c->b");
        assertThat(backend.reconcile()).as("nothing left to repair").isZero();
        assertThat(backend.quickReconcile()).as("nothing left to repair").isZero();
    }

    /**
     * The agent goes away (its backend closed, as a killed process's descriptors are) and enforcement
     * stays; a new one adopts what it finds from the whole desired state and enforces the same; its
     * uninstall leaves nothing judged.
     *
     * @param start makes a backend for the network's node, as an agent's start does
     */
    public static void aRestartedAgentKeepsEnforcingWhileItAdopts(PodNetwork net, Function<PodNetwork, Backend> start) {
        PacketScenarios s = new PacketScenarios(net, start.apply(net));
        s.apply(new ClusterEvent.PolicyUpserted(policy("x", "deny-b").select(match("app", "b")).types("Ingress").build()));
        s.expectBlocked("before the restart", "a->b", "c->b");
        s.backend.close();
        s.expectBlocked("while no agent runs", "a->b", "c->b");

        s.backend = start.apply(net);
        s.backend.apply(new Batch(DesiredDelta.of(s.compiler.snapshot())));
        s.expectBlocked("after the restart", "a->b", "c->b");
        s.backend.uninstall();
        s.expectInKernel("after uninstall nothing is judged");
    }

    /**
     * A client that reuses the source port of a connection allowed a moment ago, once a policy forbids
     * it: the new connection meets the policy of now, whatever the tuple's past (clients reuse ports
     * within seconds; a backend that took the new SYN for the old flow would be open).
     */
    public static void aNewConnectionOnAReusedPortMeetsThePolicyOfNow(PodNetwork net, Backend backend) {
        PacketScenarios s = new PacketScenarios(net, backend);
        for (boolean v6 : new boolean[] {false, true}) {
            assertThat(net.connectsFromPort("a", "b", v6, 40400)).as("a -> b from port 40400, no policy (v6: %s)", v6).isTrue();
        }
        s.apply(new ClusterEvent.PolicyUpserted(policy("x", "deny-b").select(match("app", "b")).types("Ingress").build()));
        for (boolean v6 : new boolean[] {false, true}) {
            assertThat(net.connectsFromPort("a", "b", v6, 40400)).as("the same tuple again, b isolated (v6: %s)", v6).isFalse();
        }
        s.apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "deny-b")));
        for (boolean v6 : new boolean[] {false, true}) {
            assertThat(net.connectsFromPort("a", "b", v6, 40400)).as("and once the policy is gone (v6: %s)", v6).isTrue();
        }
    }

    /**
     * Egress through a Service, as kube-proxy writes it (a DNAT in the node's PREROUTING from a ClusterIP to
     * pod b): judged on the backend, after DNAT, as upstream's e2e suite expects. A policy admitting b
     * admits the ClusterIP; one admitting only c does not; an ipBlock of b's address admits it, one of
     * the Service range does not; and the replies get back to a pod that admits no ingress at all.
     */
    public static void serviceTrafficIsJudgedOnTheBackend(PodNetwork net, Backend backend) {
        KernelTestSupport.require("iptables", "ip6tables"); // kube-proxy's DNAT, as kube-proxy's iptables mode writes it
        PacketScenarios s = new PacketScenarios(net, backend);
        IpAddress[] service = {IpAddress.parse("10.96.0.50"), IpAddress.parse("fd00:10:96::50")};
        for (int i = 0; i < 2; i++) {
            net.node().must(i == 0 ? "iptables" : "ip6tables", "-t", "nat", "-A", "PREROUTING", "-d", service[i].toString(),
                    "-p", "tcp", "--dport", Integer.toString(PodNetwork.PORT), "-j", "DNAT", "--to-destination",
                    (i == 0 ? net.address("b", false).toString() : "[" + net.address("b", true) + "]") + ":" + PodNetwork.PORT);
        }
        try {
            s.expectService(service, true, "no policy");
            s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-out").select(match("app", "a")).types("Ingress", "Egress")
                    .egress(rule(peers(pods(match("app", "b"))), ports(port("TCP", PodNetwork.PORT)))).build()));
            s.expectService(service, true, "a may reach b, and admits no ingress: the replies come back");
            s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-out").select(match("app", "a")).types("Ingress", "Egress")
                    .egress(rule(peers(pods(match("app", "b"))), ports(named("TCP", "probe")))).build()));
            s.expectService(service, true, "a may reach b's named port, resolved on b (the backend)");
            s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-out").select(match("app", "a")).types("Egress")
                    .egress(rule(peers(pods(match("app", "c"))), ports(port("TCP", PodNetwork.PORT)))).build()));
            s.expectService(service, false, "a may reach only c: not b through its Service");
            s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-out").select(match("app", "a")).types("Egress")
                    .egress(rule(peers(block(net.address("b", false) + "/32"), block(net.address("b", true) + "/128")), null)).build()));
            s.expectService(service, true, "an ipBlock of b's addresses admits b through its Service");
            s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-out").select(match("app", "a")).types("Egress")
                    .egress(rule(peers(block("10.96.0.0/16"), block("fd00:10:96::/112")), null)).build()));
            s.expectService(service, false, "an ipBlock of the Service range admits no backend");
            s.apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "a-out")));
            s.expectService(service, true, "policy removed");
        } finally {
            for (int i = 0; i < 2; i++) {
                net.node().run(i == 0 ? "iptables" : "ip6tables", "-t", "nat", "-F", "PREROUTING");
            }
        }
    }

    /**
     * Egress through a Service whose backend is a pod on another node (the DNAT sends it out of the node,
     * not to a local pod's interface): judged after DNAT on that backend, by podSelector and by ipBlock,
     * as for a local one.
     */
    public static void serviceTrafficToARemoteBackendIsJudgedOnIt(PodNetwork net, Backend backend) {
        PacketScenarios s = new PacketScenarios(net, backend);
        IpAddress[] remote = {net.remote(false), net.remote(true)};
        s.apply(new ClusterEvent.PodUpserted(Pod.builder("x", "r").labels(labels("app", "r")).ip(remote[0]).ip(remote[1])
                .port("probe", PodNetwork.PORT, Protocol.TCP).build()));
        IpAddress[] service = {IpAddress.parse("10.96.0.54"), IpAddress.parse("fd00:10:96::54")};
        s.kubeProxy(service, remote, false);
        try {
            s.expectService(service, true, "no policy");
            s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-out").select(match("app", "a")).types("Egress")
                    .egress(rule(peers(pods(match("app", "r"))), ports(port("TCP", PodNetwork.PORT)))).build()));
            s.expectService(service, true, "a may reach r, on another node");
            s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-out").select(match("app", "a")).types("Egress")
                    .egress(rule(peers(pods(match("app", "c"))), null)).build()));
            s.expectService(service, false, "a may reach only c: not r through its Service");
            s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-out").select(match("app", "a")).types("Egress")
                    .egress(rule(peers(block(remote[0] + "/32"), block(remote[1] + "/128")), null)).build()));
            s.expectService(service, true, "an ipBlock of r's addresses admits r through its Service");
            s.apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "a-out")));
            s.expectService(service, true, "policy removed");
        } finally {
            s.kubeProxyGone();
        }
    }

    /**
     * A pod reaching itself through its own Service (kube-proxy DNATs the ClusterIP back to it and
     * masquerades it, as it does for hairpin) meets its policies as any other peer would, on every
     * backend, as cyclonus expects (upstream's e2e suite ignores these pairs): a's egress rules with
     * a as the destination, a's ingress rules with a as the source (before kube-proxy's SNAT). An
     * egress policy that does not reach a, or an ingress policy that does not admit a, refuses it; a
     * policy whose peers select a itself admits it. b through the same Service meets a's ingress
     * policies as ever. The desired state agrees on every pair.
     */
    public static void aPodReachingItselfThroughItsServiceMeetsItsPolicies(PodNetwork net, Backend backend) {
        PacketScenarios s = new PacketScenarios(net, backend);
        IpAddress[] service = {IpAddress.parse("10.96.0.51"), IpAddress.parse("fd00:10:96::51")};
        s.kubeProxy(service, "a", false);
        try {
            s.expectHairpin(service, true, true, "no policy");
            s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-out").select(match("app", "a")).types("Egress")
                    .egress(rule(peers(pods(match("app", "c"))), ports(port("TCP", PodNetwork.PORT)))).build()));
            s.expectHairpin(service, false, true, "a may reach only c: not itself through its Service");
            s.apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "a-out")));
            s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-in").select(match("app", "a")).types("Ingress")
                    .ingress(rule(peers(pods(match("app", "b"))), ports(port("TCP", PodNetwork.PORT)))).build()));
            s.expectHairpin(service, false, true, "a admits only b: not itself through its Service");
            s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-in").select(match("app", "a")).types("Ingress", "Egress").build()));
            s.expectHairpin(service, false, false, "a isolated both ways, admitting and reaching no one, itself included");
            s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-in").select(match("app", "a")).types("Ingress", "Egress")
                    .ingress(rule(peers(pods(match("app", "a"))), ports(port("TCP", PodNetwork.PORT))))
                    .egress(rule(peers(pods(match("app", "a"))), ports(port("TCP", PodNetwork.PORT)))).build()));
            s.expectHairpin(service, true, false, "a admits and reaches only app=a: itself, not b");
            s.apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "a-in")));
            s.expectHairpin(service, true, true, "policy removed");
        } finally {
            s.kubeProxyGone();
        }
    }

    /**
     * Traffic through a Service that kube-proxy also masquerades (its {@code --masquerade-all}, and
     * NodePort traffic with externalTrafficPolicy Cluster): at the backend's interface the source is
     * the node's address, which is always admitted, but the verdict is the sending pod's. b admits
     * only c: a through b's Service is denied, c admitted, on every backend.
     */
    public static void masqueradedServiceTrafficIsJudgedOnItsSource(PodNetwork net, Backend backend) {
        PacketScenarios s = new PacketScenarios(net, backend);
        IpAddress[] service = {IpAddress.parse("10.96.0.52"), IpAddress.parse("fd00:10:96::52")};
        s.kubeProxy(service, "b", true);
        try {
            s.expectService(service, true, "no policy");
            s.apply(new ClusterEvent.PolicyUpserted(policy("x", "b-in").select(match("app", "b")).types("Ingress")
                    .ingress(rule(peers(pods(match("app", "c"))), ports(port("TCP", PodNetwork.PORT)))).build()));
            s.expectService(service, false, "b admits only c: a is denied though the node's address reaches b");
            s.apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "b-in")));
            s.expectService(service, true, "policy removed");
        } finally {
            s.kubeProxyGone();
        }
    }

    /**
     * A connection through a Service that is open when a policy change would now deny it keeps working
     * (on every backend: conntrack, npm_ct), while a new one meets the new policy; both families.
     */
    public static void anOpenServiceConnectionOutlivesAPolicyThatNowDeniesIt(PodNetwork net, Backend backend) {
        PacketScenarios s = new PacketScenarios(net, backend);
        IpAddress[] service = {IpAddress.parse("10.96.0.53"), IpAddress.parse("fd00:10:96::53")};
        s.kubeProxy(service, "b", false);
        PodNetwork.OpenConnection[] open = new PodNetwork.OpenConnection[2];
        try {
            for (int i = 0; i < 2; i++) {
                open[i] = net.open("a", service[i]);
                assertThat(open[i].echoes()).as("no policy: a -> %s open and answering", service[i]).isTrue();
            }
            s.apply(new ClusterEvent.PolicyUpserted(policy("x", "a-out").select(match("app", "a")).types("Egress")
                    .egress(rule(peers(pods(match("app", "c"))), null)).build()));
            s.apply(new ClusterEvent.PolicyUpserted(policy("x", "b-in").select(match("app", "b")).types("Ingress")
                    .ingress(rule(peers(pods(match("app", "c"))), null)).build()));
            for (int i = 0; i < 2; i++) {
                assertThat(open[i].echoes()).as("a may reach only c, b admits only c: the open connection to %s still answers",
                        service[i]).isTrue();
                assertThat(net.connectsTo("a", service[i])).as("but a new one to %s is denied", service[i]).isFalse();
            }
            s.apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "a-out")));
            s.apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "b-in")));
            for (int i = 0; i < 2; i++) {
                assertThat(open[i].echoes()).as("policies removed: %s", service[i]).isTrue();
            }
        } finally {
            for (PodNetwork.OpenConnection c : open) {
                if (c != null) {
                    c.close();
                }
            }
            s.kubeProxyGone();
        }
    }

    /**
     * Bridged pods the node knows nothing of yet (no neighbour entry, no forwarding entry: the kernel
     * learns those only from traffic between node and pod, never from pods talking to each other) are
     * enforced from the first batch that knows them, before they send anything. The bpf backend once
     * found such a pod only after the node had talked to it, so it went unenforced for as long as that
     * took (in the real node's cyclonus run, the whole first round of probes).
     */
    public static void silentPodsOnABridgeAreEnforcedFromTheFirstBatch(PodNetwork net, Backend backend) {
        net.forgetNeighbours();
        PacketScenarios s = new PacketScenarios(net, backend);
        s.apply(new ClusterEvent.PolicyUpserted(policy("x", "deny-b").select(match("app", "b")).types("Ingress").build()));
        s.expectBlocked("default-deny ingress on b, before any pod spoke to the node", "a->b", "c->b");
    }

    /**
     * What kube-proxy's iptables mode writes in the node for a Service with one backend: the DNAT of
     * each ClusterIP (both families, both server ports) to {@code backendPod}, and its masquerade in POSTROUTING of a
     * connection from the backend to itself (hairpin) or, with {@code masqueradeAll}, of every
     * translated connection.
     */
    private void kubeProxy(IpAddress[] service, String backendPod, boolean masqueradeAll) {
        kubeProxy(service, new IpAddress[] {net.address(backendPod, false), net.address(backendPod, true)}, masqueradeAll);
    }

    /** As above, to a backend's addresses (both families). */
    private void kubeProxy(IpAddress[] service, IpAddress[] backendAddresses, boolean masqueradeAll) {
        KernelTestSupport.require("iptables", "ip6tables");
        for (int i = 0; i < 2; i++) {
            boolean v6 = i == 1;
            String tool = v6 ? "ip6tables" : "iptables";
            IpAddress to = backendAddresses[i];
            for (int port : new int[] {PodNetwork.PORT, PodNetwork.ECHO_PORT}) {
                net.node().must(tool, "-t", "nat", "-A", "PREROUTING", "-d", service[i].toString(), "-p", "tcp", "--dport",
                        Integer.toString(port), "-j", "DNAT", "--to-destination", (v6 ? "[" + to + "]" : to.toString()) + ":" + port);
            }
            if (masqueradeAll) {
                net.node().must(tool, "-t", "nat", "-A", "POSTROUTING", "-m", "conntrack", "--ctstate", "DNAT", "-j", "MASQUERADE");
            } else {
                net.node().must(tool, "-t", "nat", "-A", "POSTROUTING", "-s", to.toString(), "-d", to.toString(), "-j", "MASQUERADE");
            }
        }
    }

    private void kubeProxyGone() {
        for (String tool : new String[] {"iptables", "ip6tables"}) {
            net.node().run(tool, "-t", "nat", "-F", "PREROUTING");
            net.node().run(tool, "-t", "nat", "-F", "POSTROUTING");
        }
    }

    /**
     * a -> its own Service (a's ClusterIPs, DNAT back to a) and b -> a's Service connect or not, as a's
     * policies say; the desired state must say the same of a -> a and b -> a (after DNAT: pod to pod).
     */
    private void expectHairpin(IpAddress[] service, boolean aConnects, boolean bConnects, String step) {
        Map<String, Boolean> want = new TreeMap<>();
        Map<String, Boolean> reference = new TreeMap<>();
        Map<String, IpAddress> to = new TreeMap<>();
        DesiredStateInterpreter interpreter = new DesiredStateInterpreter(compiler.snapshot());
        for (IpAddress address : service) {
            boolean v6 = address.v6();
            String self = "a -> " + address + " (its own Service)";
            want.put(self, aConnects);
            to.put(self, address);
            reference.put(self, interpreter.allowed(net.address("a", v6), net.address("a", v6), PodNetwork.PORT, Protocol.TCP));
            String other = "b -> " + address;
            want.put(other, bConnects);
            to.put(other, address);
            reference.put(other, interpreter.allowed(net.address("b", v6), net.address("a", v6), PodNetwork.PORT, Protocol.TCP));
        }
        assertThat(reference).as("%s: the desired state says what the test expects", step).isEqualTo(want);
        assertThat(probeAtOnce(to)).as(step).isEqualTo(want);
    }

    /** a -> the Service on both families connects or not; c, which no policy selects, always does. */
    private void expectService(IpAddress[] service, boolean aConnects, String step) {
        Map<String, Boolean> want = new TreeMap<>();
        Map<String, IpAddress> to = new TreeMap<>();
        for (IpAddress address : service) {
            want.put("a -> " + address, aConnects);
            to.put("a -> " + address, address);
            want.put("c -> " + address, true);
            to.put("c -> " + address, address);
        }
        assertThat(probeAtOnce(to)).as(step).isEqualTo(want);
    }

    /**
     * Every probe ("FROM -> ADDRESS" to the address) at once, so that the refused ones, which take the
     * probe's whole timeout, cost it once, not once each; whether each connected.
     */
    private Map<String, Boolean> probeAtOnce(Map<String, IpAddress> probes) {
        Map<String, Callable<Boolean>> connects = new TreeMap<>();
        probes.forEach((what, address) -> connects.put(what, () -> net.connectsTo(what.substring(0, what.indexOf(' ')), address)));
        return runAtOnce(connects);
    }

    /** Every probe at once; what each answered. */
    private static Map<String, Boolean> runAtOnce(Map<String, Callable<Boolean>> probes) {
        ExecutorService pool = Executors.newFixedThreadPool(probes.size());
        try {
            Map<String, Future<Boolean>> running = new TreeMap<>();
            probes.forEach((what, probe) -> running.put(what, pool.submit(probe)));
            Map<String, Boolean> out = new TreeMap<>();
            for (Map.Entry<String, Future<Boolean>> e : running.entrySet()) {
                out.put(e.getKey(), e.getValue().get());
            }
            return out;
        } catch (InterruptedException | ExecutionException e) {
            throw new IllegalStateException("probing " + probes.keySet(), e);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Each pod to the node's address and the node to each pod, both families, all at once: the pods named
     * must not reach the node; everything else must connect.
     */
    private void expectNodeBlocked(String step, String... blocked) {
        Set<String> denied = Set.of(blocked);
        Map<String, Boolean> want = new TreeMap<>();
        Map<String, Callable<Boolean>> probes = new TreeMap<>();
        for (String pod : new String[] {"a", "b", "c"}) {
            for (boolean v6 : new boolean[] {false, true}) {
                String family = v6 ? " v6" : " v4";
                IpAddress node = net.nodeAddress(v6);
                want.put(pod + "->node" + family, !denied.contains(pod));
                probes.put(pod + "->node" + family, () -> net.connectsTo(pod, node));
                want.put("node->" + pod + family, true);
                probes.put("node->" + pod + family, () -> net.nodeConnects(pod, v6));
            }
        }
        assertThat(runAtOnce(probes)).as("%s: TCP connects between the pods and their node", step).isEqualTo(want);
    }

    /**
     * Flow verdicts: a connection a NetworkPolicy default deny drops is reported within a second, naming
     * both pods, the port, the direction and every policy isolating the pod (IPv4 and IPv6); one an Admin
     * ClusterNetworkPolicy Deny drops names its tier, policy and rule; 1,000 retries of one flow (new
     * source ports) stay one flow whose count reaches them.
     */
    public static void flowVerdictsNameWhatDecided(PodNetwork net, Backend backend) {
        PacketScenarios s = new PacketScenarios(net, backend);
        FlowLog log = s.flowLog(new FlowSettings(true, false, 1000, Duration.ofSeconds(1)));
        s.apply(new ClusterEvent.PolicyUpserted(policy("x", "deny-b").select(match("app", "b")).types("Ingress").build()));
        s.apply(new ClusterEvent.PolicyUpserted(policy("x", "b-admits-c").select(match("app", "b"))
                .ingress(rule(peers(pods(match("app", "c"))), ports(port("TCP", PodNetwork.PORT)))).build()));
        Attribution isolation = new Attribution.Isolation(Direction.INGRESS, List.of(new PolicyKey("x", "deny-b"), new PolicyKey("x", "b-admits-c")));
        for (boolean v6 : new boolean[] {false, true}) {
            net.attempts("a", net.address("b", v6), PodNetwork.PORT, 1, 1);
            FlowRecord f = s.awaitFlow(log, "a", "b", v6, Duration.ofSeconds(1), 1);
            assertThat(f.verdict()).isEqualTo(FlowVerdict.DENIED);
            assertThat(f.reason()).isEqualTo(DropReason.POLICY);
            assertThat(f.direction()).isEqualTo(Direction.INGRESS);
            assertThat(f.protocol()).isEqualTo("TCP");
            assertThat(f.family()).isEqualTo(v6 ? "IPv6" : "IPv4");
            assertThat(f.backend()).isEqualTo(backend.name());
            assertThat(f.attribution()).as("every NetworkPolicy isolating b, as the kernel's verdict read it").isEqualTo(isolation);
        }

        s.apply(new ClusterEvent.ClusterPolicyUpserted(admin("admin-deny-c", 5).subjectPods(match(), match("app", "b"))
                .ingress(io.npmagent.dataplane.model.ClusterPolicyFixtures.named("no-c", deny(from(podsIn(match(), match("app", "c")))))).build()));
        net.attempts("c", net.address("b", false), PodNetwork.PORT, 1, 1);
        FlowRecord byTier = s.awaitFlow(log, "c", "b", false, Duration.ofSeconds(1), 1);
        assertThat(byTier.attribution()).isEqualTo(new Attribution.ByClusterRule(
                new ClusterRuleRef(Tier.ADMIN, "admin-deny-c", Direction.INGRESS, 0, "no-c"), RuleAction.DENY));
        assertThat(byTier.attributionText()).isEqualTo("Admin cnp/admin-deny-c ingress[0] \"no-c\" Deny");

        net.attempts("a", net.address("b", false), PodNetwork.PORT, 1, 1000);
        // the earlier attempt and these: awaitFlow finds exactly one such flow
        FlowRecord retried = s.awaitFlow(log, "a", "b", false, Duration.ofSeconds(5), 1001);
        assertThat(retried.attribution()).isEqualTo(isolation);
    }

    /**
     * Flow reports stay within their rate: 2,000 new flows at once (a scan of ports) are reported at most at
     * the configured rate, and every one not reported is counted lost.
     */
    public static void flowReportsStayWithinTheirRate(PodNetwork net, Backend backend) {
        PacketScenarios s = new PacketScenarios(net, backend);
        int rate = 20;
        int scanned = 2000;
        FlowLog log = s.flowLog(new FlowSettings(true, false, rate, Duration.ofSeconds(1)));
        s.apply(new ClusterEvent.PolicyUpserted(policy("x", "deny-b").select(match("app", "b")).types("Ingress").build()));
        long t0 = System.nanoTime();
        net.attempts("a", net.address("b", false), 10_000, scanned, scanned);
        double seconds = (System.nanoTime() - t0) / 1e9;
        try {
            Thread.sleep(2000); // a sweep and a few polls
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        long reported = log.flows(FlowFilter.ALL).size();
        long lost = backend.flows().lost().getOrDefault("rate", 0L);
        int cpus = Runtime.getRuntime().availableProcessors();
        assertThat(reported).as("flows reported in %.1f s at %d a second (and a second's burst) per CPU", seconds, rate)
                .isLessThanOrEqualTo((long) (cpus * rate * (2 + seconds)));
        assertThat(lost).as("flows over the rate counted lost").isPositive();
        assertThat(reported + lost).as("every flow reported or counted lost").isGreaterThanOrEqualTo(scanned);
        assertThat(backend.flows().reported().get("kernel")).as("the kernel's own reports, counted (npm_flow_reports_total)")
                .isBetween(reported, (long) (cpus * rate * (2 + seconds)));
    }

    /**
     * Denied flows turned on and off while the agent runs (the configuration's {@code Flows.Denied}, applied
     * live): started off, a denied connection is no flow; turned on, the next is reported within a second;
     * turned off again, a new denied flow is not reported. The drops hold throughout.
     */
    public static void flowsTurnOnAndOffLive(PodNetwork net, Backend backend) {
        PacketScenarios s = new PacketScenarios(net, backend);
        FlowLog log = s.flowLog(FlowSettings.OFF);
        s.apply(new ClusterEvent.PolicyUpserted(policy("x", "deny-b").select(match("app", "b")).types("Ingress").build()));
        net.attempts("a", net.address("b", false), PodNetwork.PORT, 1, 1);
        pause(Duration.ofSeconds(1)); // ten of the eBPF reader's polls; NFLOG delivers at once
        assertThat(log.flows(FlowFilter.ALL)).as("flows off: nothing reported").isEmpty();

        backend.flows().reconfigure(new FlowSettings(true, false, 1000, Duration.ofSeconds(1)));
        net.attempts("a", net.address("b", false), PodNetwork.PORT, 1, 1);
        assertThat(s.awaitFlow(log, "a", "b", false, Duration.ofSeconds(1), 1).verdict()).isEqualTo(FlowVerdict.DENIED);

        backend.flows().reconfigure(FlowSettings.OFF);
        assertThat(net.connects("c", "b", false)).as("denied all along").isFalse();
        pause(Duration.ofSeconds(1));
        assertThat(log.flows(FlowFilter.ALL)).as("flows off again: c's new flow not reported")
                .allSatisfy(f -> assertThat(f.source().pod()).isEqualTo(new PodKey("x", "a")));
    }

    private static void pause(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Allowed flows, opt-in: a judged pod's new connection that its policies admit is reported as allowed,
     * with the Admin Accept that admitted it where one did; a connection nothing judges is not reported.
     * (The eBPF backend's; the netfilter backends report denied flows only.)
     */
    public static void allowedFlowsAreReportedWhenAskedFor(PodNetwork net, Backend backend) {
        PacketScenarios s = new PacketScenarios(net, backend);
        FlowLog log = s.flowLog(new FlowSettings(true, true, 1000, Duration.ofSeconds(1)));
        s.apply(new ClusterEvent.PolicyUpserted(policy("x", "b-admits-a").select(match("app", "b"))
                .ingress(rule(peers(pods(match("app", "a"))), ports(port("TCP", PodNetwork.PORT)))).build()));
        s.apply(new ClusterEvent.ClusterPolicyUpserted(admin("admin-accept-c", 5).subjectPods(match(), match("app", "b"))
                .ingress(io.npmagent.dataplane.model.ClusterPolicyFixtures.named("c-welcome", accept(from(podsIn(match(), match("app", "c"))),
                        tcp(PodNetwork.PORT)))).build()));
        assertThat(net.connects("a", "b", false)).isTrue();
        assertThat(net.connects("c", "b", false)).isTrue();
        assertThat(net.connects("a", "c", false)).as("c: nothing judges it").isTrue();
        FlowRecord byNetworkPolicy = s.awaitFlow(log, "a", "b", false, Duration.ofSeconds(1), 1);
        assertThat(byNetworkPolicy.verdict()).isEqualTo(FlowVerdict.ALLOWED);
        assertThat(byNetworkPolicy.reason()).isNull();
        FlowRecord byTier = s.awaitFlow(log, "c", "b", false, Duration.ofSeconds(1), 1);
        assertThat(byTier.attribution()).isEqualTo(new Attribution.ByClusterRule(
                new ClusterRuleRef(Tier.ADMIN, "admin-accept-c", Direction.INGRESS, 0, "c-welcome"), RuleAction.ACCEPT));
        assertThat(log.flows(new FlowFilter(null, new PodKey("x", "c"), null, null, null)).stream()
                .filter(f -> f.destination().pod() != null && f.destination().pod().name().equals("c")))
                .as("a connection to a pod nothing judges is no flow").isEmpty();
    }

    /** A log fed by the backend's flow reports, pods a, b and c named by their addresses. */
    private FlowLog flowLog(FlowSettings settings) {
        Map<IpAddress, PodKey> pods = new java.util.HashMap<>();
        for (String name : new String[] {"a", "b", "c"}) {
            pods.put(net.address(name, false), new PodKey("x", name));
            pods.put(net.address(name, true), new PodKey("x", name));
        }
        FlowLog log = new FlowLog("node", backend.name(), backend.flows().refs(), pods::get, FlowLog.NearMiss.NONE, FlowLog.Counter.NONE,
                Duration.ofMinutes(10), 100_000);
        backend.flows().start(settings, log::record);
        return log;
    }

    /** The flow from pod {@code from} to pod {@code to} on the probe port once it has {@code packets}, waiting at most {@code within}. */
    private FlowRecord awaitFlow(FlowLog log, String from, String to, boolean v6, Duration within, long packets) {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            List<FlowRecord> found = log.flows(FlowFilter.ALL).stream()
                    .filter(f -> new PodKey("x", from).equals(f.source().pod()) && new PodKey("x", to).equals(f.destination().pod())
                            && f.port() == PodNetwork.PORT && f.family().equals(v6 ? "IPv6" : "IPv4"))
                    .toList();
            if (found.stream().anyMatch(f -> f.packets() >= packets)) {
                assertThat(found).as("one flow %s -> %s", from, to).hasSize(1);
                return found.get(0);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no flow " + from + " -> " + to + (v6 ? " IPv6" : " IPv4") + " with " + packets + " packets within "
                        + within + "; the log holds " + log.flows(FlowFilter.ALL).stream().map(FlowRecord::line).toList()
                        + ", lost " + backend.flows().lost());
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    private Pod pod(String name, String app) {
        return Pod.builder("x", name).labels(labels("app", app))
                .ip(net.address(name, false)).ip(net.address(name, true)).port("probe", PodNetwork.PORT, Protocol.TCP).build();
    }

    private void apply(ClusterEvent e) {
        backend.apply(new Batch(compiler.apply(e).delta()));
    }

    /** Pairs (both families) that must not connect; every other pair must. The desired state agrees. */
    private void expectBlocked(String step, String... blocked) {
        expect(step, true, blocked);
    }

    /** As {@link #expectBlocked}, for a kernel changed behind the agent's back: the desired state says otherwise. */
    private void expectInKernel(String step, String... blocked) {
        expect(step, false, blocked);
    }

    private void expect(String step, boolean desired, String... blocked) {
        Set<String> denied = Set.of(blocked);
        Map<String, Boolean> expected = new TreeMap<>();
        Map<String, Boolean> reference = new TreeMap<>();
        Map<String, Boolean> actual = new TreeMap<>();
        DesiredStateInterpreter interpreter = new DesiredStateInterpreter(compiler.snapshot());
        net.probeAll().forEach((pair, connected) -> {
            expected.put(pair.toString(), !denied.contains(pair.from() + "->" + pair.to()));
            reference.put(pair.toString(), interpreter.allowed(net.address(pair.from(), pair.v6()),
                    net.address(pair.to(), pair.v6()), PodNetwork.PORT, Protocol.TCP));
            actual.put(pair.toString(), connected);
        });
        if (desired) {
            assertThat(reference).as("%s: the desired state says what the test expects", step).isEqualTo(expected);
        }
        assertThat(actual).as("%s: TCP connects through the node", step).isEqualTo(expected);
    }
}
