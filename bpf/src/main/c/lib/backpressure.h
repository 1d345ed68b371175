/* Back-pressure: the pods' TCP told to slow down before the egress horizon, not only dropped at it
 * (seed 004, the kernel's HBM). A cgroup skb egress program at the pods' cgroup (the agent's
 * --cgroup-root) judges each packet of a rate-limited pod's TCP socket as the stack sends it, by the
 * rule tc applies (bandwidth.h, npm_egress_rule) against the pod's clock, and charges it there: from
 * the ECN threshold on, a packet of a connection without ECN passes with a congestion notification
 * (NET_XMIT_CN: tcp_enter_cwr), with a probability rising linearly to 1 at the horizon (ECN-capable
 * packets are marked CE instead); where tc would drop it, it is held back with one (NET_XMIT_DROP):
 * TCP keeps the segment and sends it when its window allows, so the receiver sees no loss and the
 * sender counts no retransmission. Judged here, a packet is charged at once: a burst TCP sends from
 * softirq as ACKs come in is judged packet by packet against a clock that already holds the ones
 * before it, where tc would see the whole burst only after all of it was sent. What it charged it
 * leaves as credit on the socket, and tc lets the packet through on it (bandwidth.h). The pod is the
 * one tc saw the socket's packets leave by (npm_sk_shaping), never an address the socket claims; until
 * tc has seen one, and for everything without a full TCP socket (UDP, forwarded packets, SYN-ACKs,
 * RSTs), tc alone judges. Loopback within the pod is never charged. */
#ifndef NPM_BACKPRESSURE_H
#define NPM_BACKPRESSURE_H

#include "bandwidth.h"
#include "endpoint.h"
#include "state.h"

/* cgroup skb egress verdicts: bit 0 lets the packet through, bit 1 notifies the sender. */
#define NPM_CG_PASS 1
#define NPM_CG_HOLD 2
#define NPM_CG_SLOW 3

#define NPM_LOOPBACK_IFINDEX 1
#define NPM_TCP_ECN_OK 1

/* A congestion notification from the ECN threshold to the horizon, with probability
 * (ahead - ecn) / (horizon - ecn), in units of 1024 ns so the products fit 64 bits. */
static __always_inline int npm_slow_down(const struct npm_bw_config *cfg, __u64 ahead, __u32 len)
{
    __u64 horizon = npm_horizon(cfg, len);
    if (ahead < cfg->ecn_ns || horizon <= cfg->ecn_ns)
        return 0;
    __u64 region = (horizon - cfg->ecn_ns) >> 10;
    __u64 into = (ahead - cfg->ecn_ns) >> 10;
    return (into << 32) > (__u64)bpf_get_prandom_u32() * region;
}

static __always_inline int npm_back_pressure(struct __sk_buff *skb)
{
    if (skb->ifindex == NPM_LOOPBACK_IFINDEX)
        return NPM_CG_PASS;
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
    struct npm_sk_shaping *ss = bpf_sk_storage_get(&npm_sk_shaping, sk, 0, 0);
    if (!tp || !ss || !ss->ifindex)
        return NPM_CG_PASS; /* not seen at the pod's interface yet: tc judges */
    struct npm_endpoint_key ek = { .ifindex = ss->ifindex, .version = npm_version() };
    struct npm_endpoint *ep = bpf_map_lookup_elem(&npm_endpoints, &ek);
    __u64 rate = ep ? ep->rate[NPM_EGRESS & 1] : 0;
    if (!rate)
        return NPM_CG_PASS;
    struct npm_rate_key key = { .endpoint = ep->id, .direction = NPM_EGRESS };
    struct npm_rate_state *st = bpf_map_lookup_elem(&npm_rate_state, &key);
    if (!st || st->rate != rate)
        return NPM_CG_PASS; /* no clock yet, or a new rate: tc starts it afresh */
    __u64 now = bpf_ktime_get_ns();
    __u32 len = skb->len + ETH_HLEN; /* as tc counts it, with the pod's Ethernet header */
    __u64 ahead = npm_ahead(st->t_next, skb->tstamp, now);
    int few = npm_few_in_flight(tp);
    int outcome = npm_egress_rule(cfg, ahead, len, few);
    if (outcome == NPM_BW_HORIZON_DROP) {
        npm_bw_count(&key, NPM_BW_HELD, len);
        return NPM_CG_HOLD;
    }
    int verdict = NPM_CG_PASS;
    if (ahead >= cfg->ecn_ns) {
        if (bpf_skb_ecn_set_ce(skb)) {
            if (outcome == NPM_BW_PASSED)
                outcome = NPM_BW_MARKED;
        } else if (!few && !(tp->ecn_flags & NPM_TCP_ECN_OK) && npm_slow_down(cfg, ahead, len)) {
            npm_bw_count(&key, NPM_BW_SLOWED, len);
            verdict = NPM_CG_SLOW;
        }
    }
    st->t_next = now + ahead + npm_tx_time(len, rate);
    __sync_fetch_and_add(&ss->credit, (__s64)len);
    npm_bw_count(&key, outcome, len);
    return verdict;
}

#endif
