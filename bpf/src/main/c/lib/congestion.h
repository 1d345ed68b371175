/* Per-pod TCP congestion control (the npm-agent.io/tcp-congestion annotation): a sock_ops program
 * attached at the cgroup that holds the pods' processes (the agent's --cgroup-root) sets each new
 * connection's algorithm to its pod's, active and passive, from the copy of the state packets read
 * now. A socket is the pod's by its local address (socket.h): one attachment serves every pod
 * whatever its cgroup (kubelet's per-pod cgroups, or none of cgroup2's on a hybrid node), and the
 * choice is part of the pod's endpoint, double-buffered with its policy and rates. A socket whose
 * address is no local pod's, and a pod with no choice, keep the namespace's default. An established
 * connection keeps what it started with: a change reaches new connections. */
#ifndef NPM_CONGESTION_H
#define NPM_CONGESTION_H

#include "socket.h"

#define NPM_SOL_TCP 6
#define NPM_TCP_CONGESTION 13

/* Connections given their pod's congestion control (0) and refused by the kernel (1), per CPU:
 * refused means the algorithm is not loaded now (a module unloaded after the agent checked the list;
 * a BPF program cannot load one). tcp_allowed_congestion_control does not apply to BPF. */
#define NPM_TCP_SET 0
#define NPM_TCP_REFUSED 1

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 2);
    __type(key, __u32);
    __type(value, __u64);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_tcp_stats SEC(".maps");

static __always_inline void npm_tcp_count(__u32 what)
{
    __u64 *n = bpf_map_lookup_elem(&npm_tcp_stats, &what);
    if (n)
        *n += 1;
}

/* Gives the connection its pod's congestion control, if the pod has one. */
static __always_inline void npm_set_congestion(struct bpf_sock_ops *skops, const struct npm_endpoint *ep)
{
    if (!ep || !ep->congestion[0])
        return;
    char name[NPM_TCP_CA_NAME_MAX];
    __builtin_memcpy(name, ep->congestion, sizeof(name));
    name[NPM_TCP_CA_NAME_MAX - 1] = 0;
    if (bpf_setsockopt(skops, NPM_SOL_TCP, NPM_TCP_CONGESTION, name, sizeof(name)) == 0)
        npm_tcp_count(NPM_TCP_SET);
    else
        npm_tcp_count(NPM_TCP_REFUSED);
}

#endif
