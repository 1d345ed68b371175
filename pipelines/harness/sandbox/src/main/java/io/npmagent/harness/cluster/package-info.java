/**
 * {@code pipelines/cluster}: a Kubernetes cluster on this machine, every part upstream's, in namespaces of
 * its own, built as kind builds one: a list of small ordered {@link io.npmagent.harness.cluster.Step}s
 * ({@link io.npmagent.harness.cluster.Step#create(io.npmagent.harness.cluster.PodNetwork)}), the node's steps run per {@link io.npmagent.harness.cluster.Node},
 * every node-scoped name taken from the node.
 *
 * <p>A node is a VM-like pair of namespaces: a network namespace (eth0 with the node's address and
 * default route, the CNI bridge cni0 and the pods' veths, kube-proxy's and the agent's netfilter rules, the
 * agent's eBPF hooks) and a mount namespace (its own sysfs and bpffs; its cgroup directory as its cgroup2
 * root). The host's interfaces and firewall are never touched. Inside run: etcd, kube-apiserver (RBAC,
 * Node authorization), kube-controller-manager (every default controller) and kube-scheduler
 * ({@link io.npmagent.harness.cluster.ClusterControlPlaneMain}); containerd (Debian's) with runc and the CNI
 * plugins bridge, host-local, loopback and portmap; the kubelet (cgroupfs driver, cgroup v1); kube-proxy
 * (iptables mode) as a node process; CoreDNS as kube-dns (10.96.0.10). Every image is built here and
 * imported into containerd, no registry. The admin kubeconfig reaches the API server from the host
 * through a socat bridge on 127.0.0.1:NPM_AGENT_CLUSTER_PORT. The cluster's processes sit in the node's
 * cgroup ({@code /sys/fs/cgroup/unified/NAME}), which is how {@code down} stops them; pods' cgroups are
 * under the node's cgroup v1 root {@code /NAME}. The kubelet's kernel tunables are saved and restored.
 */
package io.npmagent.harness.cluster;
