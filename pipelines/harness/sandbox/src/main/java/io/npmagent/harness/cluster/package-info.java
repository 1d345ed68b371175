/**
 * {@code pipelines/cluster}: a Kubernetes cluster on this machine, every part upstream's, in namespaces of
 * its own, built as kind builds one: a list of small ordered {@link io.npmagent.harness.cluster.Step}s
 * ({@link io.npmagent.harness.cluster.Step#create(io.npmagent.harness.cluster.PodNetwork)}), the node's steps run per {@link io.npmagent.harness.cluster.Node},
 * every node-scoped name taken from the node.
 *
 * <p>A cluster is a control plane and one to four nodes on an underlay: a bridge in a network namespace of
 * its own ({@code NAME-ul}), every node's eth0 a port of it, forwarding nothing further. A node is a VM-like
 * pair of namespaces: a network namespace (eth0 with the node's IPv4 and IPv6 addresses and default routes via
 * the underlay, the CNI bridge cni0 and the pods' veths, kube-proxy's and the agent's netfilter rules, the
 * agent's eBPF hooks, the pod network's routes or VXLAN devices) and a mount namespace (its own sysfs and
 * bpffs; its cgroup directory as its cgroup2 root). The host's interfaces and firewall are never touched. In
 * node 0 run etcd, kube-apiserver (RBAC, Node authorization), kube-controller-manager (every default
 * controller; node IPAM gives each node a /24 and a /64) and kube-scheduler
 * ({@link io.npmagent.harness.cluster.ClusterControlPlaneMain}); in every node containerd (Debian's) with runc
 * and the CNI plugins bridge, host-local, loopback and portmap, the kubelet (cgroupfs driver, cgroup v1), the
 * pod network ({@link io.npmagent.harness.cluster.PodNetwork}: host-gw routes or flannel's VXLAN, never a
 * masquerade between pods) and kube-proxy (iptables mode) as node processes; CoreDNS as kube-dns
 * (10.96.0.10). Every image is built here and imported into every node's containerd, no registry. The admin
 * kubeconfig reaches the API server from the host through a socat bridge on 127.0.0.1:NPM_AGENT_CLUSTER_PORT.
 * A node's processes sit in its cgroup ({@code /sys/fs/cgroup/unified/NAME}, {@code NAME-i}), which is how
 * {@code down} stops them; pods' cgroups are under the node's cgroup v1 root {@code /NAME} ({@code /NAME-i}).
 * The kubelet's kernel tunables are saved and restored.
 */
package io.npmagent.harness.cluster;
