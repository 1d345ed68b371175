package io.npmagent.bpf.libbpf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.bpf.testing.BpfFs;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.harness.node.NetworkNamespace;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * npm_forward linked at a fresh namespace's netfilter forward hook with the bpf syscall itself (Debian's
 * libbpf 1.1 has no netfilter links): what the kernel reports of the link, its pin outliving every
 * descriptor, and the kernel's refusal of a second BPF hook at one priority (why a new agent's link takes
 * the other one). Whether it judges is told with real packets in BpfPacketKernelTest.
 */
class NetfilterLinkKernelTest {
    @RegisterExtension
    final BpfFs fs = new BpfFs();
    NetworkNamespace ns;
    NetnsThread inside;

    @BeforeEach
    void setUp() {
        KernelTestSupport.require("mount", "ip");
        assertThat(NetfilterLink.programsSupported()).as("this kernel loads netfilter programs (Linux 6.4 and later)").isTrue();
        ns = NetworkNamespace.forTest("nf");
        inside = NetnsThread.enter(ns.name());
    }

    @AfterEach
    void tearDown() {
        inside.close();
        ns.close();
    }

    @Test
    void aPinnedLinkOutlivesItsDescriptorsAndTellsWhatItIs() {
        Path pin = fs.root().resolve("link_forward_v4");
        try (BpfObject object = TcPod.load(fs.root()); BpfProgram forward = object.program(TcPod.FORWARD)) {
            try (NetfilterLink link = inside.get(() -> NetfilterLink.attach(forward, NetfilterLink.NFPROTO_IPV4,
                    NetfilterLink.NF_INET_FORWARD, 7))) {
                link.pin(pin);
                NetfilterLink.Info info = link.info();
                assertThat(info.programId()).isEqualTo(forward.id());
                assertThat(info.family()).isEqualTo(NetfilterLink.NFPROTO_IPV4);
                assertThat(info.hook()).isEqualTo(NetfilterLink.NF_INET_FORWARD);
                assertThat(info.priority()).isEqualTo(7);
                assertThatThrownBy(() -> inside.get(() -> NetfilterLink.attach(forward, NetfilterLink.NFPROTO_IPV4,
                        NetfilterLink.NF_INET_FORWARD, 7)))
                        .isInstanceOf(BpfException.class).hasMessageContaining("priority 7").hasMessageContaining("EBUSY");
            }
            try (NetfilterLink again = NetfilterLink.openPinned(pin)) {
                assertThat(again.info().programId()).as("alive through its pin alone").isEqualTo(forward.id());
            }
            assertThatThrownBy(() -> NetfilterLink.openPinned(fs.root().resolve("npm_ct"))).as("a map pinned there")
                    .isInstanceOf(BpfException.class).hasMessageContaining("not bpf-link");
        }
    }
}
