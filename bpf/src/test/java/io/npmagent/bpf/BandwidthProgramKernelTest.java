package io.npmagent.bpf;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.bpf.libbpf.BpfProgram;
import io.npmagent.bpf.libbpf.NetnsThread;
import io.npmagent.bpf.testing.BpfFs;
import io.npmagent.bpf.testing.Frames;
import io.npmagent.bpf.testing.Links;
import io.npmagent.dataplane.batch.BatchQueue;
import io.npmagent.dataplane.batch.FlushResult;
import io.npmagent.dataplane.batch.FlushScheduler;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.batch.RetryPolicy;
import io.npmagent.dataplane.bandwidth.BandwidthAnnotations;
import io.npmagent.dataplane.bandwidth.BandwidthSettings;
import io.npmagent.dataplane.bandwidth.FlowControl;
import io.npmagent.dataplane.kernel.Measures;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.LabelSelector;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.policy.PolicyCompiler;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.harness.node.NetworkNamespace;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rate limits on crafted packets (BPF_PROG_TEST_RUN), with the endpoint values the backend wrote
 * from pods' annotations. Rates are low (8 kbit/s: a 1,000-byte frame takes a second) and the horizon
 * long (1 s), so that the time between two test runs, even on a loaded machine, cannot blur a verdict.
 * Every test has a pod of its own: the shapers keep state per pod.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Measures
class BandwidthProgramKernelTest {
    private static final int PASS = -1;
    private static final int DROP = 2;
    private static final BandwidthSettings SETTINGS = new BandwidthSettings(Duration.ofSeconds(1), Duration.ofMillis(200), Duration.ofSeconds(1), false,
            FlowControl.BACK_PRESSURE);
    private static final String PEER = "10.62.9.9";
    private static final String PEER6 = "fd62::9";
    private static final List<String> PODS = List.of("horizon", "small", "ecn", "ts", "big", "police", "policebig", "change", "free");

    @TempDir
    static Path tmp;
    private BpfFs fs;
    private NetworkNamespace node;
    private NetnsThread inside;
    private BpfBackend backend;
    private PrometheusRegistry registry;
    private PolicyCompiler compiler;
    private BatchQueue queue;
    private BpfProgram fromPod;
    private BpfProgram toPod;
    private final Map<String, Integer> ifindex = new HashMap<>();
    private final Map<String, String> address = new HashMap<>();

    @BeforeAll
    void cluster() {
        KernelTestSupport.require("ip");
        fs = BpfFs.mount(tmp);
        node = NetworkNamespace.forTest("bwprog");
        for (int i = 0; i < PODS.size(); i++) {
            String pod = PODS.get(i);
            address.put(pod, "10.62.0." + (i + 1));
            ifindex.put(pod, Links.veth(node, "v" + i, "p" + i));
            node.must("ip", "route", "add", address.get(pod) + "/32", "dev", "v" + i);
            node.must("ip", "-6", "route", "add", "fd62::" + (i + 1) + "/128", "dev", "v" + i);
        }
        inside = NetnsThread.enter(node.name());
        registry = new PrometheusRegistry();
        backend = new BpfBackend(fs.root().resolve("npm"), node.name(), node.runner(), SETTINGS, new Metrics(registry));
        compiler = new PolicyCompiler(null);
        queue = new BatchQueue(backend, QueueConfig.DEFAULTS, RetryPolicy.DEFAULTS, InstantSource.system(),
                FlushScheduler.singleThread("bwprog"), new Metrics(new PrometheusRegistry()));
        apply(new ClusterEvent.NamespaceUpserted(new Namespace("x", Map.of())));
        for (String pod : PODS) {
            boolean ingress = pod.startsWith("police");
            String rate = pod.equals("policebig") ? "1k" : pod.equals("free") ? null : "8k";
            pod(pod, rate == null ? Map.of() : Map.of(ingress ? BandwidthAnnotations.INGRESS : BandwidthAnnotations.EGRESS, rate));
        }
        ForwardHookBits.set(fs.root().resolve("npm"), 0); // verdicts at tc alone: egress to 10.62.9.10 is judged here
        fromPod = BpfProgram.openPinned(fs.root().resolve("npm").resolve("prog_" + BpfBackend.FROM_POD));
        toPod = BpfProgram.openPinned(fs.root().resolve("npm").resolve("prog_" + BpfBackend.TO_POD));
    }

    /** The events' changes coalesced by the queue and applied in one batch. */
    private void apply(ClusterEvent... events) {
        for (ClusterEvent e : events) {
            queue.submit(compiler.apply(e).delta());
        }
        FlushResult r = queue.flushNow();
        assertThat(r.failures()).isEmpty();
        assertThat(r.oneTransaction()).isTrue();
    }

    private void pod(String name, Map<String, String> annotations) {
        apply(podEvent(name, annotations));
    }

    private ClusterEvent podEvent(String name, Map<String, String> annotations) {
        int i = PODS.indexOf(name) + 1;
        return new ClusterEvent.PodUpserted(Pod.builder("x", name).labels(Map.of("app", name))
                .ip("10.62.0." + i).ip("fd62::" + i).annotations(annotations).build());
    }

    @AfterAll
    void remove() {
        for (AutoCloseable c : new AutoCloseable[] {fromPod, toPod, queue, backend, inside, node, fs}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }
    }

    private BpfProgram.TestRun run(BpfProgram program, String pod, byte[] frame, long tstamp) throws Exception {
        return inside.call(() -> program.testRun(frame, BpfProgram.skbContext(ifindex.get(pod), tstamp), 1));
    }

    /** A frame of {@code bytes} the pod sends, not ECN-capable. */
    private int send(String pod, int bytes) throws Exception {
        return run(fromPod, pod, Frames.udpSized(address.get(pod), PEER, bytes, 0), 0).retval();
    }

    private int receive(String pod, int bytes) throws Exception {
        return run(toPod, pod, Frames.udpSized(PEER, address.get(pod), bytes, 0), 0).retval();
    }

    @Test
    void egressDropsPastTheHorizonWithoutUsingBudget() throws Exception {
        long start = System.nanoTime();
        assertThat(send("horizon", 1000)).as("departs now; the next may depart in 1 s").isEqualTo(PASS);
        for (int i = 0; i < 5; i++) {
            assertThat(send("horizon", 1000)).as("would depart ~1 s ahead: past the large packets' 0.9 s").isEqualTo(DROP);
        }
        assertThat(System.nanoTime() - start).as("the test ran fast enough for its own premise").isLessThan(Duration.ofMillis(100).toNanos());
        Thread.sleep(1000 - (System.nanoTime() - start) / 1_000_000 + 50);
        assertThat(send("horizon", 1000)).as("the drops took no budget: the slot is free again").isEqualTo(PASS);
        String scrape = scrape();
        assertThat(counter(scrape, "npm_bandwidth_horizon_drops_total", "x/horizon", "egress")).isEqualTo(5);
        assertThat(counter(scrape, "npm_bandwidth_packets_total", "x/horizon", "egress")).isEqualTo(2);
        assertThat(counter(scrape, "npm_bandwidth_bytes_total", "x/horizon", "egress")).isEqualTo(2000);
    }

    @Test
    void smallPacketsAreDroppedLastAndAtTheFullHorizon() throws Exception {
        assertThat(send("small", 1000)).isEqualTo(PASS);
        assertThat(send("small", 1000)).as("large, ~1 s ahead").isEqualTo(DROP);
        assertThat(send("small", 100)).as("small, ~1 s ahead, short of the full horizon").isEqualTo(PASS);
        assertThat(send("small", 100)).as("small, ~1.1 s ahead").isEqualTo(DROP);
    }

    @Test
    void ecnCapablePacketsAreMarkedFromTheThreshold() throws Exception {
        String a = address.get("ecn");
        byte[] first = run(fromPod, "ecn", Frames.udpSized(a, PEER, 200, 2), 0).data(); // 200 ms at the pod's rate
        assertThat(Frames.ecn(first)).as("departs now").isEqualTo(2);
        assertThat(Frames.ecn(run(fromPod, "ecn", Frames.udpSized(a, PEER, 100, 2), 0).data())).as("just short of 200 ms ahead")
                .isEqualTo(2);
        BpfProgram.TestRun marked = run(fromPod, "ecn", Frames.udpSized(a, PEER, 100, 2), 0);
        assertThat(marked.retval()).isEqualTo(PASS);
        assertThat(Frames.ecn(marked.data())).as("~300 ms ahead: congestion experienced").isEqualTo(3);
        assertThat(Frames.ipv4ChecksumValid(marked.data())).isTrue();
        BpfProgram.TestRun plain = run(fromPod, "ecn", Frames.udpSized(a, PEER, 100, 0), 0);
        assertThat(plain.retval()).as("not ECN-capable: passes unmarked").isEqualTo(PASS);
        assertThat(Frames.ecn(plain.data())).isZero();
        BpfProgram.TestRun v6 = run(fromPod, "ecn", Frames.udpSized("fd62::3", PEER6, 100, 1), 0);
        assertThat(Frames.ecn(v6.data())).as("IPv6, ECT(1)").isEqualTo(3);
        assertThat(counter(scrape(), "npm_bandwidth_ecn_marked_total", "x/ecn", "egress")).isEqualTo(2);
    }

    @Test
    void aPacketDepartsNoEarlierThanItsTimestamp() throws Exception {
        long now = System.nanoTime(); // CLOCK_MONOTONIC, as bpf_ktime_get_ns
        byte[] frame = Frames.udpSized(address.get("ts"), PEER, 1000, 0);
        assertThat(run(fromPod, "ts", frame, now + Duration.ofMillis(950).toNanos()).retval()).as("stamped 0.95 s ahead").isEqualTo(DROP);
        assertThat(run(fromPod, "ts", frame, now + Duration.ofMillis(500).toNanos()).retval()).as("stamped 0.5 s ahead").isEqualTo(PASS);
        assertThat(send("ts", 100)).as("the next departs after the stamped one: ~1.5 s ahead").isEqualTo(DROP);
    }

    @Test
    void aPacketLongerThanTheHorizonIsNotStarved() throws Exception {
        assertThat(send("big", 3000)).as("3 s at the pod's rate, but the queue is empty").isEqualTo(PASS);
        assertThat(send("big", 100)).as("behind it").isEqualTo(DROP);
    }

    @Test
    void ingressIsPolicedWithATokenBucket() throws Exception {
        long start = System.nanoTime();
        assertThat(receive("police", 1000)).as("the first refill fills the bucket (1 s deep)").isEqualTo(PASS);
        assertThat(receive("police", 1000)).as("not in debt yet: this one takes it 1 s into debt").isEqualTo(PASS);
        assertThat(receive("police", 100)).as("in debt").isEqualTo(DROP);
        assertThat(receive("police", 1000)).isEqualTo(DROP);
        assertThat(System.nanoTime() - start).isLessThan(Duration.ofMillis(500).toNanos());
        Thread.sleep(1100 - (System.nanoTime() - start) / 1_000_000);
        assertThat(receive("police", 1000)).as("the debt is paid").isEqualTo(PASS);
        assertThat(send("police", 1000)).as("its egress is not limited").isEqualTo(PASS);
        assertThat(send("police", 1000)).isEqualTo(PASS);
        String scrape = scrape();
        assertThat(counter(scrape, "npm_bandwidth_policed_total", "x/police", "ingress")).as(scrape).isEqualTo(2);
    }

    @Test
    void aPacketLargerThanTheBucketPassesWhenTheBucketIsFull() throws Exception {
        assertThat(receive("policebig", 3000)).as("1 kbit/s: a 1 s bucket holds 125 bytes").isEqualTo(PASS);
        assertThat(receive("policebig", 100)).isEqualTo(DROP);
    }

    @Test
    void aRateChangesAndGoesWithThePodsPolicyInOneBatch() throws Exception {
        assertThat(send("change", 1000)).isEqualTo(PASS);
        assertThat(send("change", 1000)).isEqualTo(DROP);
        NetworkPolicy deny = new NetworkPolicy("x", "deny-change", LabelSelector.matchLabels(Map.of("app", "change")), List.of("Egress"),
                null, List.of());
        apply(podEvent("change", Map.of(BandwidthAnnotations.EGRESS, "1G")), new ClusterEvent.PolicyUpserted(deny));
        assertThat(run(fromPod, "change", Frames.udpSized(address.get("change"), "10.62.9.10", 1000, 0), 0).retval())
                .as("policy first: a new flow is denied").isEqualTo(DROP);
        apply(new ClusterEvent.PolicyDeleted(deny.key()));
        for (int i = 0; i < 20; i++) {
            assertThat(send("change", 1000)).as("1 Gbit/s: 8 us a frame, the backlog stays short").isEqualTo(PASS);
        }
        pod("change", Map.of(BandwidthAnnotations.EGRESS, "8k"));
        assertThat(send("change", 1000)).isEqualTo(PASS);
        assertThat(send("change", 1000)).isEqualTo(DROP);
        pod("change", Map.of());
        for (int i = 0; i < 20; i++) {
            assertThat(send("change", 1000)).as("no annotation: no limit").isEqualTo(PASS);
        }
    }

    @Test
    void aPodWithoutLimitsIsNeitherShapedNorCounted() throws Exception {
        for (int i = 0; i < 20; i++) {
            assertThat(send("free", 3000)).isEqualTo(PASS);
            assertThat(receive("free", 3000)).isEqualTo(PASS);
        }
        assertThat(scrape()).doesNotContain("pod=\"free\"");
    }

    private String scrape() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, registry.scrape());
        return out.toString(StandardCharsets.UTF_8);
    }

    /** {@code name}'s value for POD (namespace/name) and DIRECTION; its labels as the exposition sorts them. */
    private static long counter(String scrape, String name, String pod, String direction) {
        String[] ns = pod.split("/", 2);
        Matcher m = Pattern.compile(Pattern.quote(name + "{direction=\"" + direction + "\",namespace=\"" + ns[0] + "\",pod=\"" + ns[1] + "\"} ") + "([0-9.eE+]+)")
                .matcher(scrape);
        assertThat(m.find()).as("%s for %s %s in%n%s", name, pod, direction, scrape).isTrue();
        return (long) Double.parseDouble(m.group(1));
    }
}
