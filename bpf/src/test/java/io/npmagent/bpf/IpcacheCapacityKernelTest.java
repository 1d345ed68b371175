package io.npmagent.bpf;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.bpf.libbpf.BpfMap;
import io.npmagent.bpf.libbpf.BpfObject;
import io.npmagent.bpf.libbpf.NetfilterLink;
import io.npmagent.bpf.maps.EndpointMap;
import io.npmagent.bpf.maps.IpcacheMap;
import io.npmagent.bpf.maps.LocalAddressMap;
import io.npmagent.bpf.maps.PolicyMap;
import io.npmagent.bpf.maps.StateMap;
import io.npmagent.bpf.testing.BpfFs;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The ipcache holds both copies of the state for a cluster at Kubernetes' limit: 150,000 pods, each
 * with an IPv4 and an IPv6 address, and 5,000 nodes, written through the agent's own writer into the
 * maps the agent's object declares. With its capacity at 262,144 before, a write past 131,072
 * addresses a copy (65,536 dual-stack pods) was refused (ENOSPC), and an agent past that never
 * converged: the swarm's 150,000 single-stack pods met it at the second copy, this test at the first.
 */
class IpcacheCapacityKernelTest {
    private static final int PODS = 150_000;
    private static final int NODES = 5_000;

    @RegisterExtension
    final BpfFs fs = new BpfFs();

    @Test
    void bothCopiesOfEveryAddressAtTheClusterLimitFit() {
        try (BpfObject object = BpfObject.open(BpfObject.resource(BpfBackend.OBJECT), "npm_agent", fs.root())) {
            boolean netfilter = NetfilterLink.programsSupported();
            object.prepareProgram(ForwardHooks.PROGRAM, netfilter, NetfilterLink.PROG_TYPE_NETFILTER, NetfilterLink.ATTACH_NETFILTER);
            object.load();
            try (BpfMap state = object.map(StateMap.NAME);
                    BpfMap endpoints = object.map(EndpointMap.NAME);
                    BpfMap local = object.map(LocalAddressMap.NAME);
                    BpfMap ipcache = object.map(IpcacheMap.NAME);
                    BpfMap policy = object.map(PolicyMap.NAME)) {
                VersionedMaps maps = new VersionedMaps(state, endpoints, local, ipcache, policy, new Metrics(new PrometheusRegistry()));
                for (int i = 0; i < PODS; i++) {
                    maps.putIpcache(pod4(i), IpcacheMap.Value.of(1000 + i % 4096));
                    maps.putIpcache(pod6(i), IpcacheMap.Value.of(1000 + i % 4096));
                }
                for (int n = 0; n < NODES; n++) {
                    maps.putIpcache(Cidr.host(IpAddress.v4(0x0af90000 + n)), IpcacheMap.Value.of(2));
                    maps.putIpcache(Cidr.host(IpAddress.v6(0xfd00_0000_0000_00f9L, n)), IpcacheMap.Value.of(2));
                }
                int perCopy = 2 * PODS + 2 * NODES;

                assertThat(maps.commit()).as("the first copy written whole").isEqualTo(perCopy);
                maps.putIpcache(pod4(PODS - 1), IpcacheMap.Value.of(7)); // one pod changes class: the other copy is written
                assertThat(maps.commit()).as("the second copy written whole").isEqualTo(perCopy);

                int active = StateMap.version(state.lookup(StateMap.key())) & 1;
                assertThat(IpcacheMap.Value.decode(ipcache.lookup(new IpcacheMap.Key(active, pod4(PODS - 1)).encode())))
                        .isEqualTo(IpcacheMap.Value.of(7));
                assertThat(IpcacheMap.Value.decode(ipcache.lookup(new IpcacheMap.Key(1 - active, pod4(PODS - 1)).encode())))
                        .as("the copy packets no longer read keeps what it was written").isEqualTo(IpcacheMap.Value.of(1000 + (PODS - 1) % 4096));
                for (int v : List.of(0, 1)) {
                    assertThat(ipcache.lookup(new IpcacheMap.Key(v, pod6(PODS - 1)).encode())).as("copy %d", v).isNotNull();
                }
            }
        }
    }

    /** 10.0.0.0/8 and fd00::/64 numbered from the pod's index, as a /32 and a /128. */
    private static Cidr pod4(int i) {
        return Cidr.host(IpAddress.v4(0x0a000000 + i));
    }

    private static Cidr pod6(int i) {
        return Cidr.host(IpAddress.v6(0xfd00_0000_0000_0000L, i));
    }
}
