package io.npmagent.bpf.libbpf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.bpf.testing.Links;
import io.npmagent.bpf.testing.BpfFs;
import io.npmagent.bpf.testing.Frames;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.harness.node.NetworkNamespace;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The test-run harness (BPF_PROG_TEST_RUN) on tc_pod.o's programs: crafted frames in, verdicts out.
 * Only enough to prove the harness; the verdict tests belong with the programs.
 */
class BpfProgramKernelTest {
    private static final int EP = 9;

    @RegisterExtension
    final BpfFs fs = new BpfFs();
    BpfObject object;

    @BeforeEach
    void load() {
        object = TcPod.load(fs.root());
    }

    @AfterEach
    void unload() {
        object.close();
    }

    @Test
    void anIpv4PacketOfNoLocalPodPassesUntouched() {
        try (BpfProgram fromPod = object.program(TcPod.FROM_POD)) {
            byte[] packet = Frames.tcp("10.99.0.1", 40000, "10.99.0.2", 80);
            BpfProgram.TestRun run = fromPod.testRun(packet, null, 3);
            assertThat(run.retval()).isEqualTo(TcPod.PASS);
            assertThat(run.data()).isEqualTo(packet);
            assertThat(run.ctx()).hasSize(Layouts.SK_BUFF_SIZE);
            assertThat(run.durationNanos()).isNotNegative();
        }
    }

    @Test
    void aNonIpFramePasses() {
        try (BpfProgram fromPod = object.program(TcPod.FROM_POD); BpfProgram toPod = object.program(TcPod.TO_POD)) {
            assertThat(fromPod.testRun(Frames.arp(), null, 1).retval()).isEqualTo(TcPod.PASS);
            assertThat(toPod.testRun(Frames.arp(), null, 1).retval()).isEqualTo(TcPod.PASS);
        }
    }

    /**
     * The context's ifindex reaches the program: with an isolated endpoint on that interface and no
     * policy, the same packet is dropped (and counted) there and passes on any other interface. The
     * kernel resolves the ifindex in the caller's namespace, so the run happens in a NetnsThread.
     */
    @Test
    void theContextCarriesTheIfindexIntoTheProgram() throws Exception {
        KernelTestSupport.require("ip");
        try (NetworkNamespace ns = NetworkNamespace.forTest("run");
                NetnsThread inside = NetnsThread.enter(ns.name());
                BpfProgram fromPod = object.program(TcPod.FROM_POD);
                BpfMap endpoints = object.map("npm_endpoints");
                BpfMap drops = object.map("npm_drops")) {
            int ifindex = Links.veth(ns, "v0", "v1");
            endpoints.update(TcPod.endpointKey(ifindex, 0), TcPod.endpoint(EP, false, true));
            byte[] packet = Frames.tcp("10.99.0.1", 40000, "10.99.0.2", 80);

            BpfProgram.TestRun dropped = inside.call(() -> fromPod.testRun(packet, BpfProgram.skbContext(ifindex), 1));
            assertThat(dropped.retval()).isEqualTo(TcPod.TC_ACT_SHOT);
            assertThat(TcPod.u32(dropped.ctx(), Layouts.SK_BUFF_IFINDEX)).isEqualTo(ifindex);
            byte[] counted = drops.lookup(TcPod.dropKey(EP, TcPod.NPM_EGRESS));
            assertThat(counted).isNotNull();
            long packets = 0;
            for (int cpu = 0; cpu < BpfMap.possibleCpus(); cpu++) {
                packets += TcPod.u64(counted, cpu * 16);
            }
            assertThat(packets).isEqualTo(1);

            // No context: the kernel runs it on lo (ifindex 1), which is no pod's.
            assertThat(inside.call(() -> fromPod.testRun(packet, null, 1)).retval()).isEqualTo(TcPod.PASS);
            // An ifindex the namespace does not have is refused before the program runs.
            assertThatThrownBy(() -> inside.call(() -> fromPod.testRun(packet, BpfProgram.skbContext(ifindex + 100), 1)))
                    .isInstanceOfSatisfying(BpfException.class, e -> {
                        assertThat(e.operation()).isEqualTo("bpf_prog_test_run_opts");
                        assertThat(e.errno()).isEqualTo(Errno.ENODEV);
                    });
        }
    }

    @Test
    void aContextFieldTheKernelDoesNotLetCallersSetIsRefused() {
        try (BpfProgram fromPod = object.program(TcPod.FROM_POD)) {
            byte[] ctx = BpfProgram.skbContext(1);
            ctx[0] = 1; // __sk_buff.len: the kernel derives it from the packet
            assertThatThrownBy(() -> fromPod.testRun(Frames.arp(), ctx, 1))
                    .isInstanceOfSatisfying(BpfException.class, e -> assertThat(e.errno()).isEqualTo(Errno.EINVAL));
        }
    }
}
