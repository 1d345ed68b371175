/* Pacing at the socket: a rate-limited pod's TCP connections pace themselves (SO_MAX_PACING_RATE,
 * set by the sock_ops program at the pods' cgroup) at a cap that follows the pod's egress clock, so
 * TCP sends at the pod's rate instead of bursting into the shaper and learning the rate from drops.
 *
 * Why: without sch_fq (these machines) the EDT shaper at the pod's interface cannot hold a packet to
 * its departure time; it can only pass or drop, so a flow starting after idle sends a whole horizon at
 * line rate first. TCP's own pacing (tcp_internal_pacing: an hrtimer per socket, what BBR uses without
 * fq) needs no qdisc. It is not exact: its timer fires late, and on these machines a socket capped at
 * 1 Gbit/s sends ~740 Mbit/s (500M: 85%, 100M: 99%; iperf3 --fq-rate between two namespaces). So the
 * cap is not the rate but a controller on the pod's clock (npm_rate_state, kept by the shaper), with a
 * target queue T of a quarter of the ECN threshold (25 ms by default):
 *
 *     cap = rate * T / max(ahead, T / 4)
 *
 * four times the rate while the pod's queue is short, the rate at a queue of T, half of it at 2T. One
 * flow settles where its pacing delivers the rate, with a queue under T (bytes above the rate in a
 * flow's first second: under T's worth); N flows together settle at a queue of about N T, so a few
 * bulk flows meet neither the ECN threshold nor the horizon, and many still do, as without pacing.
 * Pacing never stalls a connection (unlike holding a packet back with nothing in flight, which waits
 * for TCP's probe timer: backpressure.h); a capped socket keeps sending, slower. The shaper stays what
 * enforces the limit; the cap makes TCP meet it without loss. Only with flow control "protect": with
 * back-pressure the socket program judges instead (the two together starved low rates: a 10M pod at
 * 4.4 Mbit/s, measured).
 *
 * Every RTT sample (BPF_SOCK_OPS_RTT_CB) a capped connection takes the cap as it is now, and none once
 * its pod has no limit. A connection opened while its pod had no limit is not paced (the shaper alone
 * holds it, as before flow control). The pod is the one the socket's address claims (socket.h): a
 * socket claiming another pod's address only paces itself by that pod's clock; what it is charged is
 * decided at its own pod's interface. */
#ifndef NPM_PACING_H
#define NPM_PACING_H

#include "bandwidth.h"
#include "socket.h"

#define NPM_SOL_SOCKET 1
#define NPM_SO_MAX_PACING_RATE 47
#define NPM_UNPACED 0xffffffffU /* ~0U: no cap */

/* The cap in bytes per second for a connection of the pod with this endpoint, now. */
static __always_inline __u32 npm_pacing_cap(const struct npm_bw_config *cfg, const struct npm_endpoint *ep)
{
    if (!cfg || cfg->flow != NPM_FLOW_PROTECT || !ep)
        return NPM_UNPACED; /* back-pressure judges at the socket instead (measured: the two together starve low rates) */
    __u64 rate = ep->rate[NPM_EGRESS & 1];
    __u64 bytes = rate / 8;
    if (!bytes || bytes >= NPM_UNPACED / 2)
        return NPM_UNPACED; /* no limit, or past what a u32 cap holds (17 Gbit/s) */
    __u64 ahead = 0;
    struct npm_rate_key key = { .endpoint = ep->id, .direction = NPM_EGRESS };
    struct npm_rate_state *st = bpf_map_lookup_elem(&npm_rate_state, &key);
    if (st && st->rate == rate) {
        __u64 now = bpf_ktime_get_ns();
        ahead = st->t_next > now ? st->t_next - now : 0;
    }
    /* in units of 1024 ns, so that bytes * t fits 64 bits for any threshold */
    __u64 t = (cfg->ecn_ns / 4) >> 10;
    __u64 queue = ahead >> 10;
    /* at least a quarter of T, rounded up: the cap is then at most 4 x the rate (t / floor(t / 4) is more) */
    if (queue < (t + 3) / 4)
        queue = (t + 3) / 4;
    if (!queue)
        queue = 1;
    __u64 cap = bytes * t / queue;
    if (cap >= NPM_UNPACED)
        return NPM_UNPACED;
    return cap ? (__u32)cap : 1;
}

/* Gives the connection the cap if it moved by more than a sixteenth from the one it has; a capped
 * connection asks again every RTT sample, so the cap follows the pod's queue and its limit. A connection
 * opened uncapped is left alone: whatever pacing its application chose is its own, and the node's
 * sockets (the program sits at the node's cgroup2 root) cost no socket option call. */
static __always_inline void npm_pace(struct bpf_sock_ops *skops, const struct npm_endpoint *ep)
{
    __u32 zero = 0;
    __u32 want = npm_pacing_cap(bpf_map_lookup_elem(&npm_bw_config, &zero), ep);
    if (want == NPM_UNPACED && skops->op != BPF_SOCK_OPS_RTT_CB)
        return;
    __u32 has = NPM_UNPACED;
    if (bpf_getsockopt(skops, NPM_SOL_SOCKET, NPM_SO_MAX_PACING_RATE, &has, sizeof(has)) != 0)
        return;
    __u32 diff = want > has ? want - has : has - want;
    if (diff == 0 || (want != NPM_UNPACED && has != NPM_UNPACED && diff < has / 16))
        return;
    if (bpf_setsockopt(skops, NPM_SOL_SOCKET, NPM_SO_MAX_PACING_RATE, &want, sizeof(want)) != 0)
        return;
    if (want != NPM_UNPACED)
        bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags | BPF_SOCK_OPS_RTT_CB_FLAG);
}

#endif
