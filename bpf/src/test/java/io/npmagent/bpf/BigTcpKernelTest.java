package io.npmagent.bpf;

import static io.npmagent.dataplane.kernel.KernelTestSupport.must;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.bpf.libbpf.NetnsThread;
import io.npmagent.bpf.libbpf.Rtnetlink;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.harness.node.NetworkNamespace;
import io.npmagent.harness.node.PodLink;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link BigTcp#raise} on real veths between a node namespace and two pod namespaces (named under
 * /run/netns): a routed pod gets the IPv4 limits raised on both ends and keeps IPv6's 64 KiB; a pod
 * whose node end is a bridge port gets both families.
 */
class BigTcpKernelTest {
    private NetworkNamespace nodeNs;
    private NetworkNamespace routedNs;
    private NetworkNamespace bridgedNs;
    private String node;
    private String routed;
    private String bridged;

    @BeforeEach
    void namespaces() {
        KernelTestSupport.require();
        nodeNs = NetworkNamespace.forTest("node");
        routedNs = NetworkNamespace.forTest("r");
        bridgedNs = NetworkNamespace.forTest("b");
        node = nodeNs.name();
        routed = routedNs.name();
        bridged = bridgedNs.name();
        PodLink.veth(nodeNs, "hr", routedNs, "eth0");
        PodLink.veth(nodeNs, "hb", bridgedNs, "eth0");
        nodeNs.must("ip", "link", "add", "br0", "type", "bridge");
        nodeNs.must("ip", "link", "set", "hb", "master", "br0");
    }

    @AfterEach
    void remove() {
        for (NetworkNamespace ns : new NetworkNamespace[] {nodeNs, routedNs, bridgedNs}) {
            if (ns != null) {
                ns.close();
            }
        }
    }

    @Test
    void routedPodsGetIpv4OnBothEndsAndBridgedPodsBothFamilies() throws Exception {
        try (NetnsThread n = NetnsThread.enter(node)) {
            BigTcp big = new BigTcp();
            BigTcp.Raised r = n.get(() -> big.raise(ifindex(node, "hr")));
            BigTcp.Raised b = n.get(() -> big.raise(ifindex(node, "hb")));
            assertThat(r).isEqualTo(new BigTcp.Raised(true, false, true, ""));
            assertThat(b).isEqualTo(new BigTcp.Raised(true, true, true, ""));
            Rtnetlink.Link hr = n.get(() -> Rtnetlink.link("hr"));
            Rtnetlink.Link hb = n.get(() -> Rtnetlink.link("hb"));
            assertThat(hr.ifindex()).as("found by name").isEqualTo(ifindex(node, "hr"));
            assertThat(List.of(hr.gsoIpv4MaxSize(), hr.groIpv4MaxSize(), hr.gsoMaxSize(), hr.groMaxSize()))
                    .containsExactly(BigTcp.SIZE, BigTcp.SIZE, 65_536L, 65_536L);
            assertThat(List.of(hb.gsoIpv4MaxSize(), hb.groIpv4MaxSize(), hb.gsoMaxSize(), hb.groMaxSize()))
                    .containsExactly(BigTcp.SIZE, BigTcp.SIZE, BigTcp.SIZE, BigTcp.SIZE);
            assertThat(hr.master()).isZero();
            assertThat(hb.master()).isPositive();
            assertThat(hr.peer()).as("the veth's other end").isPositive();
            assertThat(hr.peerNetnsId()).as("the id the node has for the routed pod's namespace")
                    .isEqualTo(n.get(() -> Rtnetlink.netnsId(Path.of("/run/netns", routed)))).isNotEqualTo(hb.peerNetnsId());
        }
        assertThat(podEnd(routed)).containsExactly(BigTcp.SIZE, BigTcp.SIZE, 65_536L, 65_536L);
        assertThat(podEnd(bridged)).containsExactly(BigTcp.SIZE, BigTcp.SIZE, BigTcp.SIZE, BigTcp.SIZE);
    }

    private static List<Long> podEnd(String ns) throws Exception {
        try (NetnsThread t = NetnsThread.enter(ns)) {
            Rtnetlink.Link l = t.get(() -> Rtnetlink.link("eth0"));
            return List.of(l.gsoIpv4MaxSize(), l.groIpv4MaxSize(), l.gsoMaxSize(), l.groMaxSize());
        }
    }

    /** The index of link {@code name} in namespace {@code ns}. */
    private static int ifindex(String ns, String name) {
        String line = must(List.of("ip", "-n", ns, "-o", "link", "show", name)).stdout();
        return Integer.parseInt(line.substring(0, line.indexOf(':')).strip());
    }
}
