package io.npmagent.pipelines.swarm;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.npmagent.pipelines.bench.BenchApiServer;

/**
 * The cluster's Nodes as objects: {@code node-1} (the measured agent's) and one per watcher, each with
 * the status a kubelet reports (addresses, capacity, conditions, node info, a few images), so that the
 * agent's Node watch lists and carries what a real cluster's would. No kubelet runs behind them.
 */
final class FakeNodes {
    private FakeNodes() {}

    /** Creates Nodes {@code node-from} ... {@code node-to}. */
    static void create(BenchApiServer api, int from, int to) {
        for (int i = from; i <= to; i++) {
            api.create(node(i));
        }
        api.flush();
    }

    static Node node(int i) {
        String json = """
                {"apiVersion":"v1","kind":"Node","metadata":{"name":"node-%1$d","labels":{"kubernetes.io/hostname":"node-%1$d",
                  "kubernetes.io/os":"linux","kubernetes.io/arch":"amd64","node.kubernetes.io/instance-type":"standard-8",
                  "topology.kubernetes.io/zone":"zone-%2$d","topology.kubernetes.io/region":"region-1"},
                  "annotations":{"node.alpha.kubernetes.io/ttl":"0","volumes.kubernetes.io/controller-managed-attach-detach":"true"}},
                 "spec":{"podCIDR":"10.%3$d.%4$d.0/24","podCIDRs":["10.%3$d.%4$d.0/24"],"providerID":"fake://node-%1$d"},
                 "status":{"addresses":[{"type":"InternalIP","address":"192.168.%5$d.%6$d"},{"type":"Hostname","address":"node-%1$d"}],
                  "capacity":{"cpu":"8","memory":"32884524Ki","pods":"110","ephemeral-storage":"101445540Ki"},
                  "allocatable":{"cpu":"7910m","memory":"29934316Ki","pods":"110","ephemeral-storage":"93492209510"},
                  "conditions":[{"type":"MemoryPressure","status":"False","reason":"KubeletHasSufficientMemory","lastHeartbeatTime":"2026-11-01T00:00:00Z","lastTransitionTime":"2026-11-01T00:00:00Z"},
                   {"type":"DiskPressure","status":"False","reason":"KubeletHasNoDiskPressure","lastHeartbeatTime":"2026-11-01T00:00:00Z","lastTransitionTime":"2026-11-01T00:00:00Z"},
                   {"type":"PIDPressure","status":"False","reason":"KubeletHasSufficientPID","lastHeartbeatTime":"2026-11-01T00:00:00Z","lastTransitionTime":"2026-11-01T00:00:00Z"},
                   {"type":"Ready","status":"True","reason":"KubeletReady","lastHeartbeatTime":"2026-11-01T00:00:00Z","lastTransitionTime":"2026-11-01T00:00:00Z"}],
                  "nodeInfo":{"machineID":"%7$032x","systemUUID":"%7$032x","bootID":"%7$032x","kernelVersion":"6.18.0","osImage":"Debian GNU/Linux 12 (bookworm)",
                   "containerRuntimeVersion":"containerd://2.1.4","kubeletVersion":"v1.34.4","kubeProxyVersion":"","operatingSystem":"linux","architecture":"amd64"},
                  "images":[{"names":["registry.k8s.io/kube-proxy@sha256:%7$064x","registry.k8s.io/kube-proxy:v1.34.4"],"sizeBytes":30000000},
                   {"names":["registry.k8s.io/coredns/coredns@sha256:%7$064x","registry.k8s.io/coredns/coredns:v1.15.0"],"sizeBytes":20000000},
                   {"names":["registry.example.com/npm-agent@sha256:%7$064x","registry.example.com/npm-agent:1.0"],"sizeBytes":120000000}]}}
                """.formatted(i, i % 3, 64 + (i >> 8) % 64, i & 255, (i >> 8) & 255, i & 255, i);
        return Serialization.unmarshal(json, Node.class);
    }
}
