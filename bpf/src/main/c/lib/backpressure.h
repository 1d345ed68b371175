/* Back-pressure: the pods' TCP told to slow down before the egress horizon, not only dropped at it
 * (seed 004, the kernel's HBM). A cgroup skb egress program at the pods' cgroup (the agent's
 * --cgroup-root) sees each packet as the pod's stack sends it, with its socket, and reads the pod's
 * egress clock as tc left it (bandwidth.h): it never charges it, tc does, once the packet reaches the
 * pod's interface. From the ECN threshold to the horizon, a TCP packet of a connection without ECN
 * passes with a congestion notification (NET_XMIT_CN: tcp_enter_cwr), with a probability rising
 * linearly from 0 to 1 (ECN connections get tc's CE marks instead); from a tenth before the horizon
 * it is held back with a notification (NET_XMIT_DROP): TCP keeps it and sends it again once its window allows, so the
 * receiver sees no loss and the sender counts no retransmission, where tc's drop at the horizon costs
 * both. A flow with fewer than 2 packets in flight is left alone up to twice the horizon, where
 * bandwidth.h's protection ends (and it is held back past that). The pod is found by the socket's address (socket.h): a socket claiming another pod's
 * address only slows itself down. */
#ifndef NPM_BACKPRESSURE_H
#define NPM_BACKPRESSURE_H

#include "bandwidth.h"
#include "socket.h"

/* cgroup skb egress verdicts: bit 0 lets the packet through, bit 1 notifies the sender. */
#define NPM_CG_PASS 1
#define NPM_CG_HOLD 2
#define NPM_CG_SLOW 3

#define NPM_LOOPBACK_IFINDEX 1
#define NPM_TCP_ECN_OK 1

static __always_inline int npm_back_pressure(struct __sk_buff *skb)
{
    if (skb->ifindex == NPM_LOOPBACK_IFINDEX)
        return NPM_CG_PASS; /* within the pod: never reaches its interface, never charged */
    __u32 zero = 0;
    struct npm_bw_config *cfg = bpf_map_lookup_elem(&npm_bw_config, &zero);
    if (!cfg || cfg->flow != NPM_FLOW_BACK_PRESSURE)
        return NPM_CG_PASS;
    struct bpf_sock *sk = skb->sk;
    if (!sk)
        return NPM_CG_PASS;
    sk = bpf_sk_fullsock(sk);
    if (!sk || sk->protocol != IPPROTO_TCP)
        return NPM_CG_PASS;
    struct bpf_tcp_sock *tp = bpf_tcp_sock(sk);
    if (!tp)
        return NPM_CG_PASS;
    __u32 ip6[4] = { sk->src_ip6[0], sk->src_ip6[1], sk->src_ip6[2], sk->src_ip6[3] };
    struct npm_endpoint *ep = npm_socket_endpoint(sk->family, sk->src_ip4, ip6, npm_version());
    if (!ep || !ep->rate[NPM_EGRESS & 1])
        return NPM_CG_PASS;
    struct npm_rate_key key = { .endpoint = ep->id, .direction = NPM_EGRESS };
    struct npm_rate_state *st = bpf_map_lookup_elem(&npm_rate_state, &key);
    if (!st || st->rate != ep->rate[NPM_EGRESS & 1])
        return NPM_CG_PASS; /* no clock yet, or a new rate: tc starts it afresh */
    __u64 ahead = npm_ahead(st->t_next, skb->tstamp, bpf_ktime_get_ns());
    if (tp->packets_out < 2 && ahead < npm_protection_limit(cfg))
        return NPM_CG_PASS; /* protected: tc lets it through */
    /* Held a tenth of the horizon before tc would drop: what TCP sends from softirq (as ACKs come in)
     * reaches tc only after the whole burst was checked here against the clock as it was. */
    __u64 horizon = npm_horizon(cfg, skb->len) - cfg->horizon_ns / 10;
    if (ahead >= horizon) {
        npm_bw_count(&key, NPM_BW_HELD, skb->len);
        return NPM_CG_HOLD;
    }
    if (ahead < cfg->ecn_ns || (tp->ecn_flags & NPM_TCP_ECN_OK))
        return NPM_CG_PASS;
    /* P(notify) = (ahead - ecn) / (horizon - ecn), in units of 1024 ns so the products fit 64 bits. */
    __u64 region = (horizon - cfg->ecn_ns) >> 10;
    __u64 into = (ahead - cfg->ecn_ns) >> 10;
    if ((into << 32) > (__u64)bpf_get_prandom_u32() * region) {
        npm_bw_count(&key, NPM_BW_SLOWED, skb->len);
        return NPM_CG_SLOW;
    }
    return NPM_CG_PASS;
}

#endif
