package io.npmagent.harness.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NodeTest {
    private final ClusterConfig config = ClusterConfig.fromEnv(Map.of());

    @Test
    void theEnvironmentNamesTheClusterAndWhereItKeepsItsFiles() {
        assertThat(config).isEqualTo(new ClusterConfig("npm-agent-cluster", 16443, Path.of("/var/lib/npm-agent-cluster"),
                Path.of("/run/npm-agent-cluster"), Path.of("/var/cache/npm-agent/upstream")));
        ClusterConfig other = ClusterConfig.fromEnv(Map.of("NPM_AGENT_CLUSTER_NAME", "ci", "NPM_AGENT_CLUSTER_PORT", "16444",
                "NPM_AGENT_CLUSTER_DIR", "/tmp/ci", "NPM_AGENT_UPSTREAM_CACHE", "/tmp/cache"));
        assertThat(other.adminKubeconfig()).isEqualTo(Path.of("/tmp/ci/admin.kubeconfig"));
        assertThat(other.imageCache()).isEqualTo(Path.of("/tmp/cache/images"));
        assertThat(other.run()).isEqualTo(Path.of("/run/ci"));
        assertThatThrownBy(() -> ClusterConfig.fromEnv(Map.of("NPM_AGENT_CLUSTER_NAME", "Bad_Name")))
                .hasMessageContaining("NPM_AGENT_CLUSTER_NAME");
    }

    @Test
    void theFirstNodeKeepsTheNamesAOneNodeClusterAlwaysHad() {
        Node n = Node.of(config, 0);
        assertThat(n.name()).isEqualTo("npm-node");
        assertThat(n.ip()).isEqualTo("10.250.0.10");
        assertThat(n.nodeIps()).isEqualTo("10.250.0.10,fd00:10:250::10");
        assertThat(n.underlayPort()).isEqualTo("node0");
        assertThat(n.netns()).isEqualTo("npm-agent-cluster");
        assertThat(n.mountNs()).isEqualTo(Path.of("/run/npm-agent-cluster/ns/mnt"));
        assertThat(n.cgroup()).isEqualTo(Path.of("/sys/fs/cgroup/unified/npm-agent-cluster"));
        assertThat(n.v1Root()).isEqualTo("/npm-agent-cluster");
        assertThat(n.containerdSocket()).isEqualTo(Path.of("/run/npm-agent-cluster/containerd/containerd.sock"));
        assertThat(n.kubeletDir()).isEqualTo(Path.of("/var/lib/npm-agent-cluster/kubelet"));
    }

    @Test
    void everyOtherNodeHasNamesOfItsOwn() {
        Node a = Node.of(config, 0);
        Node b = Node.of(config, 2);
        assertThat(b.netns()).isEqualTo("npm-agent-cluster-2");
        assertThat(b.ip()).isEqualTo("10.250.0.12");
        assertThat(b.ipv6()).isEqualTo("fd00:10:250::12");
        assertThat(List.of(b.name(), b.mountNs(), b.cgroup(), b.v1Root(), b.containerdSocket(), b.containerdDir(), b.kubeletDir(), b.cniDir()))
                .doesNotContainAnyElementsOf(List.of(a.name(), a.mountNs(), a.cgroup(), a.v1Root(), a.containerdSocket(), a.containerdDir(),
                        a.kubeletDir(), a.cniDir()));
        assertThatThrownBy(() -> Node.of(config, ClusterConfig.MAX_NODES)).hasMessageContaining("1 to 4 nodes");
        // The underlay's namespace adds -ul: a name of 29 would make one of 32, past the kernel's 31.
        assertThatThrownBy(() -> ClusterConfig.fromEnv(Map.of("NPM_AGENT_CLUSTER_NAME", "a".repeat(29)))).hasMessageContaining("up to 28");
        assertThat(ClusterConfig.fromEnv(Map.of("NPM_AGENT_CLUSTER_NAME", "a".repeat(28))).underlayNetns()).hasSize(31);
    }

    @Test
    void aCommandOrADaemonRunsInTheNodesNamespacesAndItsCgroup() {
        Node n = Node.of(config, 0);
        assertThat(n.inside(List.of("ip", "link"))).containsExactly("nsenter", "--net=/run/netns/npm-agent-cluster",
                "--mount=/run/npm-agent-cluster/ns/mnt", "--", "ip", "link");
        assertThat(n.ctr(List.of("version"))).endsWith("ctr", "--address", "/run/npm-agent-cluster/containerd/containerd.sock", "-n", "k8s.io", "version");
        assertThat(n.daemon("kubelet", Path.of("/tmp/k.log"), List.of("kubelet")).command()).containsExactly("setsid", "sh", "-c",
                "echo $$ > \"$0/cgroup.procs\" && exec \"$@\"", "/sys/fs/cgroup/unified/npm-agent-cluster",
                "nsenter", "--net=/run/netns/npm-agent-cluster", "--mount=/run/npm-agent-cluster/ns/mnt", "--", "kubelet");
    }
}
