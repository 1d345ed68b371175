package io.npmagent.bpf;

import static io.npmagent.dataplane.model.PolicyFixtures.block;
import static io.npmagent.dataplane.model.PolicyFixtures.labels;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static io.npmagent.dataplane.model.PolicyFixtures.named;
import static io.npmagent.dataplane.model.PolicyFixtures.peers;
import static io.npmagent.dataplane.model.PolicyFixtures.pods;
import static io.npmagent.dataplane.model.PolicyFixtures.policy;
import static io.npmagent.dataplane.model.PolicyFixtures.port;
import static io.npmagent.dataplane.model.PolicyFixtures.ports;
import static io.npmagent.dataplane.model.PolicyFixtures.range;
import static io.npmagent.dataplane.model.PolicyFixtures.rule;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.bpf.libbpf.BpfMap;
import io.npmagent.bpf.libbpf.BpfProgram;
import io.npmagent.bpf.maps.CtMap;
import io.npmagent.bpf.libbpf.NetnsThread;
import io.npmagent.bpf.testing.BpfFs;
import io.npmagent.bpf.testing.Frames;
import io.npmagent.bpf.testing.Links;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.bandwidth.BandwidthSettings;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.harness.node.NetworkNamespace;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The programs' verdicts on crafted packets (BPF_PROG_TEST_RUN), with the maps the backend wrote for a
 * small cluster: pods a, b, c and d behind veths of one node namespace (host routes to their
 * addresses, as a routed CNI leaves them).
 *
 * <ul>
 *   <li>b admits a on TCP 8000-8100 and UDP 53, and is isolated for egress with no egress rule;
 *   <li>c may send only to 192.168.0.0/16 except 192.168.1.0/24;
 *   <li>d admits anyone on its port named http (8080);
 *   <li>a is isolated in no direction.
 * </ul>
 *
 * {@code from(pod)} runs the program on the packets a pod sends (ingress of its host-side interface),
 * {@code to(pod)} on the packets it receives.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ProgramVerdictKernelTest {
    private static final int PASS = -1; // TC_ACT_UNSPEC: on to the next filter
    private static final int DROP = 2; // TC_ACT_SHOT
    private static final String A = "10.61.0.1";
    private static final String B = "10.61.0.2";
    private static final String C = "10.61.0.3";
    private static final String D = "10.61.0.4";
    private static final String A6 = "fd61::1";
    private static final String B6 = "fd61::2";
    private static final String NODE = "169.254.1.1";
    private static final String ROUTER = "10.61.9.9";

    @TempDir
    static Path tmp;
    private BpfFs fs;
    private NetworkNamespace node;
    private NetnsThread inside;
    private BpfBackend backend;
    private PrometheusRegistry registry;
    private BpfProgram fromPod;
    private BpfProgram toPod;
    private final Map<String, Integer> ifindex = new HashMap<>();
    private final PolicyCompiler compiler = new PolicyCompiler(null);

    @BeforeAll
    void cluster() {
        KernelTestSupport.require("ip", "bridge");
        fs = BpfFs.mount(tmp);
        node = NetworkNamespace.forTest("verdict");
        String[][] pods = {{"a", A, A6}, {"b", B, B6}, {"c", C, "fd61::3"}, {"d", D, "fd61::4"}};
        for (String[] p : pods) {
            ifindex.put(p[0], Links.veth(node, "v" + p[0], "p" + p[0]));
            node.must("ip", "route", "add", p[1] + "/32", "dev", "v" + p[0]);
            node.must("ip", "-6", "route", "add", p[2] + "/128", "dev", "v" + p[0]);
        }
        node.must("ip", "addr", "add", NODE + "/32", "dev", "va");
        inside = NetnsThread.enter(node.name());
        registry = new PrometheusRegistry();
        backend = new BpfBackend(fs.root().resolve("npm"), node.name(), node.runner(), BandwidthSettings.DEFAULTS, new Metrics(registry));

        apply(new ClusterEvent.NamespaceUpserted(new Namespace("x", labels())));
        for (String[] p : pods) {
            Pod.Builder pod = Pod.builder("x", p[0]).labels(labels("app", p[0])).ip(p[1]).ip(p[2]);
            if (p[0].equals("d")) {
                pod.port("http", 8080, Protocol.TCP);
            }
            apply(new ClusterEvent.PodUpserted(pod.build()));
        }
        apply(new ClusterEvent.PolicyUpserted(policy("x", "b").select(match("app", "b")).types("Ingress", "Egress")
                .ingress(rule(peers(pods(match("app", "a"))), ports(range("TCP", 8000, 8100), port("UDP", 53)))).build()));
        apply(new ClusterEvent.PolicyUpserted(policy("x", "c").select(match("app", "c")).types("Egress")
                .egress(rule(peers(block("192.168.0.0/16", "192.168.1.0/24")), null)).build()));
        apply(new ClusterEvent.PolicyUpserted(policy("x", "d").select(match("app", "d"))
                .ingress(rule(null, ports(named("TCP", "http")))).build()));

        // These tests judge at tc alone, as on a kernel without a forward hook; egressIsDeferredToTheForwardHook
        // turns the hook's bits on.
        forwardHooks(0);
        fromPod = BpfProgram.openPinned(fs.root().resolve("npm").resolve("prog_" + BpfBackend.FROM_POD));
        toPod = BpfProgram.openPinned(fs.root().resolve("npm").resolve("prog_" + BpfBackend.TO_POD));
    }

    @AfterAll
    void remove() {
        for (AutoCloseable c : new AutoCloseable[] {fromPod, toPod, backend, inside, node, fs}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }
    }

    private void apply(ClusterEvent e) {
        backend.apply(new Batch(compiler.apply(e).delta()));
    }

    private int run(BpfProgram program, String pod, byte[] frame) throws Exception {
        return testRun(program, pod, frame).retval();
    }

    private BpfProgram.TestRun testRun(BpfProgram program, String pod, byte[] frame) throws Exception {
        return inside.call(() -> program.testRun(frame, BpfProgram.skbContext(ifindex.get(pod)), 1));
    }

    private void forwardHooks(int bits) {
        ForwardHookBits.set(fs.root().resolve("npm"), bits);
    }

    /** The mark tc left on the packet (struct __sk_buff's mark, at offset 8 of the context out). */
    private static int mark(BpfProgram.TestRun r) {
        return java.nio.ByteBuffer.wrap(r.ctx()).order(java.nio.ByteOrder.nativeOrder()).getInt(8);
    }

    private int from(String pod, byte[] frame) throws Exception {
        return run(fromPod, pod, frame);
    }

    private int to(String pod, byte[] frame) throws Exception {
        return run(toPod, pod, frame);
    }

    @Test
    void portRangeEdgesAndProtocols() throws Exception {
        assertThat(to("b", Frames.tcp(A, 40000, B, 7999))).as("below the range").isEqualTo(DROP);
        assertThat(to("b", Frames.tcp(A, 40000, B, 8000))).as("first port").isEqualTo(PASS);
        assertThat(to("b", Frames.tcp(A, 40000, B, 8050))).isEqualTo(PASS);
        assertThat(to("b", Frames.tcp(A, 40000, B, 8100))).as("last port").isEqualTo(PASS);
        assertThat(to("b", Frames.tcp(A, 40000, B, 8101))).as("above the range").isEqualTo(DROP);
        assertThat(to("b", Frames.udp(A, 40000, B, 53))).isEqualTo(PASS);
        assertThat(to("b", Frames.udp(A, 40000, B, 8000))).as("the range is TCP only").isEqualTo(DROP);
        assertThat(to("b", Frames.tcp(A, 40000, B, 53))).as("53 is UDP only").isEqualTo(DROP);
        assertThat(to("b", Frames.ping(A, B))).as("no port rule admits ICMP").isEqualTo(DROP);
    }

    @Test
    void peersAreJudgedByIdentity() throws Exception {
        assertThat(to("b", Frames.tcp(C, 40000, B, 8000))).as("c is not admitted").isEqualTo(DROP);
        assertThat(to("b", Frames.tcp("10.77.0.1", 40000, B, 8000))).as("the world is not admitted").isEqualTo(DROP);
        assertThat(to("d", Frames.tcp(C, 40000, D, 8080))).as("named port, any peer").isEqualTo(PASS);
        assertThat(to("d", Frames.tcp("10.77.0.1", 40000, D, 8080))).isEqualTo(PASS);
        assertThat(to("d", Frames.tcp(C, 40000, D, 8081))).isEqualTo(DROP);
        assertThat(to("a", Frames.tcp(C, 40000, A, 1))).as("a is not isolated").isEqualTo(PASS);
        assertThat(from("a", Frames.udp(A, 1, "10.77.0.1", 1))).isEqualTo(PASS);
    }

    @Test
    void ipv6() throws Exception {
        assertThat(to("b", Frames.tcp(A6, 40000, B6, 8100))).isEqualTo(PASS);
        assertThat(to("b", Frames.tcp(A6, 40000, B6, 8101))).isEqualTo(DROP);
        assertThat(to("b", Frames.tcp("fd61::3", 40000, B6, 8000))).isEqualTo(DROP);
        assertThat(from("b", Frames.neighbourSolicitation(B6, "fe80::1"))).as("neighbour discovery is never policy").isEqualTo(PASS);
        assertThat(from("b", Frames.mldReport("fe80::2"))).as("nor is MLD, behind its hop-by-hop header").isEqualTo(PASS);
    }

    @Test
    void ipBlockWithExcept() throws Exception {
        assertThat(from("c", Frames.tcp(C, 40000, "192.168.2.1", 443))).isEqualTo(PASS);
        assertThat(from("c", Frames.udp(C, 40000, "192.168.255.255", 53))).isEqualTo(PASS);
        assertThat(from("c", Frames.tcp(C, 40000, "192.168.1.5", 443))).as("in the except").isEqualTo(DROP);
        assertThat(from("c", Frames.tcp(C, 40000, "10.0.0.1", 443))).as("outside the block").isEqualTo(DROP);
        assertThat(from("c", Frames.tcp(C, 40000, A, 443))).as("a pod outside the block").isEqualTo(DROP);
    }

    @Test
    void repliesAndIcmpErrorsOfAllowedFlowsPass() throws Exception {
        assertThat(from("b", Frames.tcpAck(B, 8001, A, 40001))).as("b may not send: no flow yet").isEqualTo(DROP);
        assertThat(to("b", Frames.tcp(A, 40001, B, 8001))).isEqualTo(PASS);
        assertThat(from("b", Frames.tcpAck(B, 8001, A, 40001))).as("the reply").isEqualTo(PASS);
        assertThat(to("b", Frames.tcpAck(A, 40001, B, 8001))).as("established").isEqualTo(PASS);
        assertThat(from("b", Frames.tcpAck(B, 8001, A, 40002))).as("another flow is no reply").isEqualTo(DROP);

        byte[] reply = Frames.tcpAck(B, 8001, A, 40001);
        assertThat(to("b", Frames.icmpError(ROUTER, B, reply))).as("fragmentation needed, about the reply").isEqualTo(PASS);
        byte[] request = Frames.tcp(A, 40001, B, 8001);
        assertThat(from("b", Frames.icmpError(B, A, request))).as("b's own error about the request").isEqualTo(PASS);
        byte[] unknown = Frames.tcpAck(B, 8001, A, 40999);
        assertThat(to("b", Frames.icmpError(ROUTER, B, unknown))).as("about no flow of b's").isEqualTo(DROP);
    }

    /**
     * With a forward hook, egress to an address that is no pod (which DNAT may turn into a Service's
     * backend) is marked and left to the hook; egress to a pod is still judged here; so is everything of a
     * family whose hook is missing.
     */
    @Test
    void egressToAnAddressThatIsNoPodIsLeftToTheForwardHook() throws Exception {
        forwardHooks(1);
        try {
            BpfProgram.TestRun world = testRun(fromPod, "c", Frames.tcp(C, 40000, "10.96.0.50", 80));
            assertThat(world.retval()).as("a ClusterIP, say").isEqualTo(PASS);
            assertThat(mark(world) & 0x20000).as("marked for the forward hook").isEqualTo(0x20000);
            BpfProgram.TestRun atom = testRun(fromPod, "c", Frames.tcp(C, 40000, "192.168.1.5", 443));
            assertThat(atom.retval()).as("an ipBlock's address").isEqualTo(PASS);
            assertThat(mark(atom) & 0x20000).isEqualTo(0x20000);
            assertThat(from("c", Frames.tcp(C, 40000, A, 443))).as("a pod: judged here").isEqualTo(DROP);
            assertThat(from("b", Frames.tcp(B6, 40000, "fd00:10:96::50", 80))).as("IPv6 has no hook here").isEqualTo(DROP);
            BpfProgram.TestRun open = testRun(fromPod, "a", Frames.tcp(A, 40000, "10.96.0.50", 80));
            assertThat(mark(open) & 0x20000).as("a is not isolated: nothing to judge later").isZero();
        } finally {
            forwardHooks(0);
        }
    }

    /**
     * Clients reuse source ports within seconds of a close (the conformance pipeline saw it: a port
     * reused 22 s later), so a SYN on a tuple conntrack knows is a new connection and meets the policy of
     * now; segments of the connection that is open keep passing, as conntrack's ESTABLISHED does.
     */
    @Test
    void aSynOnAKnownTupleMeetsThePolicyOfNow() throws Exception {
        assertThat(to("a", Frames.tcp(C, 40300, A, 80))).as("a is not isolated yet").isEqualTo(PASS);
        assertThat(to("a", Frames.tcp(C, 40301, A, 80))).isEqualTo(PASS);
        apply(new ClusterEvent.PolicyUpserted(policy("x", "deny-a").select(match("app", "a")).types("Ingress").build()));
        try {
            assertThat(to("a", Frames.tcp(C, 40300, A, 80))).as("a new connection on the tuple of an allowed one").isEqualTo(DROP);
            assertThat(to("a", Frames.tcpAck(C, 40301, A, 80))).as("the connection that is open").isEqualTo(PASS);
            assertThat(to("a", Frames.tcpFlags(C, 40301, A, 80, 0x11))).as("its FIN").isEqualTo(PASS);
            assertThat(from("a", Frames.tcpFlags(A, 80, C, 40301, 0x11))).as("and the reply's").isEqualTo(PASS);
            assertThat(closing(A, 40301)).as("closed both ways: the entry lives seconds, not hours").isEqualTo(0x03);
            assertThat(to("a", Frames.tcpFlags(C, 40300, A, 80, 0x14))).as("a RST of the old connection").isEqualTo(PASS);
            assertThat(closing(A, 40300)).isEqualTo(0x04);
            assertThat(to("a", Frames.tcp(C, 40302, A, 80))).as("a new tuple").isEqualTo(DROP);
        } finally {
            apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "deny-a")));
        }
        assertThat(to("a", Frames.tcp(C, 40300, A, 80))).as("open again").isEqualTo(PASS);
    }

    /** The close bits of a's ingress entry for C:sport -> A:80. */
    private int closing(String a, int sport) {
        try (BpfMap ct = BpfMap.openPinned(fs.root().resolve("npm").resolve(CtMap.NAME))) {
            for (byte[][] kv : ct.entries()) {
                CtMap.Key k = CtMap.Key.decode(kv[0]);
                if (k.sport() == sport && k.daddr().equals(IpAddress.parse(a)) && k.dport() == 80) {
                    return CtMap.Value.decode(kv[1]).closing();
                }
            }
            throw new AssertionError("no conntrack entry for " + C + ":" + sport + " -> " + a + ":80");
        }
    }

    @Test
    void theNodeIsAlwaysAdmittedAndNonIpPasses() throws Exception {
        assertThat(to("b", Frames.tcp(NODE, 40000, B, 9999))).as("kubelet probes").isEqualTo(PASS);
        assertThat(from("b", Frames.udp(B, 40000, NODE, 53))).as("node-local DNS").isEqualTo(PASS);
        assertThat(to("b", Frames.arp())).isEqualTo(PASS);
        assertThat(from("b", Frames.arp())).isEqualTo(PASS);
    }

    @Test
    void dropsAreCountedPerPodAndDirection() throws Exception {
        for (int i = 0; i < 3; i++) {
            assertThat(from("c", Frames.tcp(C, 41000 + i, "10.0.0.1", 443))).isEqualTo(DROP);
        }
        String scrape = scrape();
        assertThat(scrape).containsPattern("npm_bpf_policy_drops_total\\{direction=\"egress\",namespace=\"x\",pod=\"c\"} [3-9]");
        assertThat(scrape).contains("npm_bpf_map_entries{map=\"npm_policy\"}");
        assertThat(scrape).contains("npm_bpf_map_update_latency_seconds_count{map=\"npm_policy\"}");
    }

    private String scrape() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, registry.scrape());
        return out.toString(StandardCharsets.UTF_8);
    }
}
