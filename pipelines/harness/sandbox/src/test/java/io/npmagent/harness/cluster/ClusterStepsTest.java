package io.npmagent.harness.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonParser;
import io.npmagent.harness.controlplane.GoModules;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ClusterStepsTest {
    private final ClusterConfig config = ClusterConfig.fromEnv(Map.of());
    private final Node node = Node.of(config, 0);

    @Test
    void upRunsTheNodeThenTheControlPlaneThenTheRuntimeThenTheAddOns() {
        assertThat(Step.create(PodNetwork.HOST_GW)).extracting(Step::what).containsExactly("underlay", "network and mount namespaces", "cgroup roots",
                "control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler)", "the API server's bridge to the host",
                "containerd", "images", "kubelet", "pod network (host-gw)", "kube-proxy", "CoreDNS");
        assertThat(Step.create(PodNetwork.of("vxlan"))).extracting(Step::what).contains("pod network (vxlan)");
        assertThatThrownBy(() -> PodNetwork.of("calico")).hasMessageContaining("host-gw or vxlan");
    }

    @Test
    void flannelsSubnetFileGivesThePodsAnMtuThatFitsBothTunnels() {
        var env = Flannel.parse("FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_IPV6_SUBNET=fd00:10:244:1::1/64\n"
                + "FLANNEL_MTU=1450\nFLANNEL_IPMASQ=false\n");
        assertThat(env).containsEntry("FLANNEL_SUBNET", "10.244.1.1/24").containsEntry("FLANNEL_IPMASQ", "false");
        // flannel.1 is 1450, flannel-v6.1 1430 over the IPv6 underlay: the pods take the smaller.
        assertThat(Flannel.mtu(env)).isEqualTo(1430);
        assertThat(Flannel.NET_CONF).contains("\"EnableIPv6\": true", "\"Type\": \"vxlan\"");
    }

    @Test
    void theKubeletRunsOnCgroupV1UnderTheNodesRootWithTheNodesSocket() {
        String yaml = Kubelet.render(node, Path.of("/ca.crt"), Path.of("/logs"));
        assertThat(yaml).contains("failCgroupV1: false", "cgroupRoot: /npm-agent-cluster", "cgroupDriver: cgroupfs",
                "containerRuntimeEndpoint: unix:///run/npm-agent-cluster/containerd/containerd.sock", "address: 10.250.0.10",
                "clusterDNS: [10.96.0.10]", "resolvConf: /var/lib/npm-agent-cluster/kubelet/resolv.conf", "podLogsDir: /logs");
    }

    @Test
    void containerdAndCniKeepTheirStateUnderTheNodesDirectories() {
        String toml = Containerd.render(node, Path.of("/bin"), "registry.k8s.io/pause:3.10.1");
        assertThat(toml).contains("root = \"/var/lib/npm-agent-cluster/containerd/root\"", "state = \"/run/npm-agent-cluster/containerd/state\"",
                "address = \"/run/npm-agent-cluster/containerd/containerd.sock\"", "sandbox_image = \"registry.k8s.io/pause:3.10.1\"",
                "bin_dir = \"/bin/cni\"", "conf_dir = \"/var/lib/npm-agent-cluster/cni/net.d\"", "netns_mounts_under_state_dir = true");
        String cni = CniConfig.render("npm-agent-cluster", node, List.of("10.244.1.0/24", "fd00:10:244:1::/64"), 1450);
        assertThat(cni).contains("\"ranges\": [[{\"subnet\": \"10.244.1.0/24\"}], [{\"subnet\": \"fd00:10:244:1::/64\"}]]",
                "\"routes\": [{\"dst\": \"0.0.0.0/0\"}, {\"dst\": \"::/0\"}]", "\"bridge\": \"cni0\"", "\"mtu\": 1450",
                "\"dataDir\": \"/var/lib/npm-agent-cluster/cni/ipam\"");
        // A masquerade would give cross-node peers the node's address and break podSelector rules silently.
        assertThat(cni).contains("\"ipMasq\": false");
        assertThat(JsonParser.parseString(cni).isJsonObject()).isTrue();
        assertThat(KubeProxy.render(node, Path.of("/kp.kubeconfig"))).contains("mode: iptables", "hostnameOverride: npm-node",
                "clusterCIDR: 10.244.0.0/16,fd00:10:244::/56", "maxPerCore: 0");
    }

    @Test
    void theHostReachesTheApiServerThroughTheBridge() {
        assertThat(ControlPlaneStep.hostKubeconfig("server: https://127.0.0.1:6443\n", 16443)).isEqualTo("server: https://127.0.0.1:16443\n");
        assertThat(HostBridge.argv(node, 16443, "127.0.0.1", 6443)).containsExactly("socat", "TCP-LISTEN:16443,bind=127.0.0.1,fork,reuseaddr",
                "EXEC:nsenter --net=/run/netns/npm-agent-cluster socat STDIO TCP\\:127.0.0.1\\:6443");
    }

    @Test
    void oneKeyOfTheAgentsConfigIsSetAndTheRestKept() {
        String config = "{\"Backend\": \"auto\", \"Toggles\": {\"Other\": 1}}";
        assertThat(Agent.withKey(config, "Toggles.NetPolInBackground", "false"))
                .isEqualTo("{\n  \"Backend\": \"auto\",\n  \"Toggles\": {\n    \"Other\": 1,\n    \"NetPolInBackground\": false\n  }\n}\n");
        assertThat(Agent.withKey(config, "Backend", "\"nft\"")).contains("\"Backend\": \"nft\"");
        assertThat(Agent.withKey("{}", "A.B", "\"<x>\"")).contains("\"B\": \"<x>\"");
    }

    @Test
    void versionsAndHierarchiesAreReadFromWhatUpstreamAndTheKernelWrite() {
        assertThat(GoModules.required("module x\n\nrequire k8s.io/kubernetes v1.34.4\n\nrequire (\n)\n", "k8s.io/kubernetes")).isEqualTo("v1.34.4");
        assertThat(NodeCgroups.v1Hierarchies("cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\ncgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n"))
                .containsExactly(Path.of("/sys/fs/cgroup/cpu"));
    }
}
