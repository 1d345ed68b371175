/* Per-pod rate limits. Both directions keep one virtual clock per pod and direction (npm_rate_state)
 * and charge each packet the time it takes at the pod's rate, skb->len * 8 / rate: the bytes the
 * pod's interface carries (a GSO packet counts once with its one set of headers).
 *
 * Egress (what the pod sends), earliest departure time: a packet departs at the later of the
 * aggregate's next free slot, its own timestamp and now. Departing a horizon or more from now, it is
 * dropped and uses no budget; large packets are dropped a tenth of the horizon earlier, so small ones
 * (ACKs, requests) keep passing while bulk flows back off, as in the kernel's HBM sample. From the ECN
 * threshold on, ECN-capable packets are marked CE instead. With no fq downstream to hold packets to
 * their departure times (these machines have no sch_fq), this is what bounds the rate: a virtual
 * queue a horizon deep.
 *
 * The packet still carries the pod's socket here (a veth keeps skb->sk across namespaces), and with
 * it the flow (flow control, from NPM_FLOW_PROTECT on): a TCP flow with fewer than 2 packets in flight
 * is treated as a small packet: dropped only at the full horizon, where bulk packets meet it a tenth
 * earlier, so no flow starves and no delayed ACK times out (HBM's rule). Never past the horizon: on a
 * node, where a round trip takes microseconds, one packet in flight is no small rate, and a flow that
 * back-pressure has slowed to one packet in flight is still a bulk flow; many such must not take a
 * pod past its limit. With back-pressure (backpressure.h), a TCP socket's packets are judged by the
 * same rule as its stack sends them, where TCP can be told to slow down and a packet held back costs
 * no loss; they are charged there and pass here on the credit that left in the socket
 * (npm_sk_shaping). tc tells the socket which pod it is: its packets leave by the pod's interface, a
 * fact no address claim can change.
 *
 * Ingress (what is delivered to the pod), a policer: a token bucket burst_ns deep at the pod's rate,
 * kept as the time its debt is paid. A packet passes if the bucket is not in debt, and may take it
 * into debt by itself, so a packet larger than the bucket still passes once the bucket is full. Kept
 * in time, the first refill (no state yet) cannot overflow: the clock is only ever clamped. */
#ifndef NPM_BANDWIDTH_H
#define NPM_BANDWIDTH_H

#include "common.h"

#define NPM_NSEC_PER_SEC 1000000000ULL
/* Frames up to this many bytes (ACKs, requests, DNS) are "small": dropped only at the full horizon. */
#define NPM_SMALL_PACKET 256

/* Flow control: what egress shaping does with the pod's sockets. */
#define NPM_FLOW_OFF 0           /* packets only */
#define NPM_FLOW_PROTECT 1       /* a TCP flow with fewer than 2 packets in flight is never dropped */
#define NPM_FLOW_BACK_PRESSURE 2 /* that, and TCP told to slow down before the horizon (backpressure.h) */

struct npm_bw_config {
    __u64 horizon_ns; /* egress: a packet departing this far ahead is dropped */
    __u64 ecn_ns;     /* egress: an ECN-capable packet departing this far ahead is marked CE */
    __u64 burst_ns;   /* ingress: the policer's depth, in time at the pod's rate */
    __u32 flow;       /* egress: NPM_FLOW_* */
    __u32 pad;
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct npm_bw_config);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_bw_config SEC(".maps");

struct npm_rate_key {
    __u32 endpoint;
    __u8 direction;
    __u8 pad[3];
};

struct npm_rate_state {
    __u64 t_next; /* egress: when the next packet may depart; ingress: when the bucket's debt is paid */
    __u64 rate;   /* the rate t_next was reckoned at: a new rate starts from an empty queue, a full bucket */
};

/* LRU: the state of an endpoint that is gone ages out; losing it only forgets a backlog. */
struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 8192);
    __type(key, struct npm_rate_key);
    __type(value, struct npm_rate_state);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_rate_state SEC(".maps");

/* A rate-limited pod's TCP socket, with back-pressure: the pod's interface its packets leave by (set by
 * tc, 0 until its first packet got there), and the bytes charged at the socket (backpressure.h) that
 * tc has not seen yet. Atomic adds: the socket's CPU adds, tc's may take. */
struct npm_sk_shaping {
    __u32 ifindex;
    __u32 pad;
    __s64 credit;
};

struct {
    __uint(type, BPF_MAP_TYPE_SK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, struct npm_sk_shaping);
} npm_sk_shaping SEC(".maps");

/* npm_bandwidth_*_total: per endpoint and direction, what passed, was marked, dropped or policed;
 * egress packets past the horizon let through because their flow had fewer than 2 in flight; and
 * at the socket (backpressure.h), packets TCP was told to slow down on, sent or held back. */
struct npm_bw_stats {
    __u64 packets;
    __u64 bytes;
    __u64 marked;
    __u64 horizon_drops;
    __u64 policed;
    __u64 protected_;
    __u64 slowed;
    __u64 held;
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
    __uint(max_entries, 8192);
    __type(key, struct npm_rate_key);
    __type(value, struct npm_bw_stats);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_bw_stats SEC(".maps");

#define NPM_BW_PASSED 0
#define NPM_BW_MARKED 1
#define NPM_BW_HORIZON_DROP 2
#define NPM_BW_POLICED 3
#define NPM_BW_PROTECTED 4
#define NPM_BW_SLOWED 5
#define NPM_BW_HELD 6

static __always_inline void npm_bw_count(struct npm_rate_key *key, int outcome, __u32 len)
{
    struct npm_bw_stats *s = bpf_map_lookup_elem(&npm_bw_stats, key);
    if (!s) {
        struct npm_bw_stats zero = {};
        bpf_map_update_elem(&npm_bw_stats, key, &zero, BPF_NOEXIST);
        s = bpf_map_lookup_elem(&npm_bw_stats, key);
        if (!s)
            return;
    }
    if (outcome == NPM_BW_HORIZON_DROP) {
        s->horizon_drops += 1;
    } else if (outcome == NPM_BW_POLICED) {
        s->policed += 1;
    } else if (outcome == NPM_BW_SLOWED) {
        s->slowed += 1; /* counted as passed when tc charges it */
    } else if (outcome == NPM_BW_HELD) {
        s->held += 1;
    } else {
        s->packets += 1;
        s->bytes += len;
        if (outcome == NPM_BW_MARKED)
            s->marked += 1;
        if (outcome == NPM_BW_PROTECTED)
            s->protected_ += 1;
    }
}

static __always_inline struct npm_rate_state *npm_rate_state_of(struct npm_rate_key *key)
{
    struct npm_rate_state *st = bpf_map_lookup_elem(&npm_rate_state, key);
    if (st)
        return st;
    struct npm_rate_state zero = {};
    bpf_map_update_elem(&npm_rate_state, key, &zero, BPF_NOEXIST);
    return bpf_map_lookup_elem(&npm_rate_state, key);
}

/* The time a packet of len bytes takes at rate bits per second. len is at most a BIG TCP packet
 * (512 KiB), so len * 8e9 stays far below 2^64. */
static __always_inline __u64 npm_tx_time(__u32 len, __u64 rate)
{
    return (__u64)len * 8 * NPM_NSEC_PER_SEC / rate;
}

/* How far ahead of now a packet would depart: the later of the aggregate's next free slot, its own
 * timestamp and now. */
static __always_inline __u64 npm_ahead(__u64 t_next, __u64 tstamp, __u64 now)
{
    __u64 t = tstamp > now ? tstamp : now;
    return t_next > t ? t_next - now : t - now;
}

/* The egress horizon for a packet of len bytes: large packets meet it a tenth earlier. */
static __always_inline __u64 npm_horizon(const struct npm_bw_config *cfg, __u32 len)
{
    return len > NPM_SMALL_PACKET ? cfg->horizon_ns - cfg->horizon_ns / 10 : cfg->horizon_ns;
}


/* The egress rule, wherever a packet is judged (at tc, or at its socket: backpressure.h): past the
 * horizon (a tenth earlier for large packets) it is dropped, unless flow control protects its TCP flow
 * for having fewer than 2 packets in flight: then, as a small packet, only at the horizon itself. */
static __always_inline int npm_egress_rule(const struct npm_bw_config *cfg, __u64 ahead, __u32 len, int few_in_flight)
{
    if (ahead < npm_horizon(cfg, len))
        return NPM_BW_PASSED;
    if (cfg->flow != NPM_FLOW_OFF && few_in_flight && ahead < cfg->horizon_ns)
        return NPM_BW_PROTECTED;
    return NPM_BW_HORIZON_DROP;
}

/* The packet's flow has fewer than 2 packets in flight (HBM: packets_out <= 1), read as the pod's stack
 * sent the packet: the veth hands it on to tc before TCP counts it as out. */
static __always_inline int npm_few_in_flight(struct bpf_tcp_sock *tp)
{
    return tp && tp->packets_out < 2;
}

/* Concurrent CPUs may each read the same t_next and both advance it: a race that, as in Cilium's
 * EDT, lets a packet through slightly early and never holds one back. */
static __always_inline int npm_shape(struct __sk_buff *skb, __u32 endpoint, __u8 direction, __u64 rate)
{
    if (!rate)
        return NPM_PASS;
    __u32 zero = 0;
    struct npm_bw_config *cfg = bpf_map_lookup_elem(&npm_bw_config, &zero);
    struct npm_rate_key key = { .endpoint = endpoint, .direction = direction };
    struct npm_rate_state *st = npm_rate_state_of(&key);
    if (!cfg || !st)
        return NPM_PASS; /* cannot happen: an array's only entry, an LRU insert */
    __u64 now = bpf_ktime_get_ns();
    __u32 len = skb->len;
    if (st->rate != rate) {
        st->rate = rate;
        st->t_next = 0;
    }
    __u64 t = st->t_next;
    if (direction == NPM_EGRESS) {
        int few = 0;
        struct bpf_sock *sk = cfg->flow != NPM_FLOW_OFF ? skb->sk : NULL;
        if (sk)
            sk = bpf_sk_fullsock(sk);
        if (sk && sk->protocol == IPPROTO_TCP) {
            if (cfg->flow == NPM_FLOW_BACK_PRESSURE) {
                struct npm_sk_shaping *ss = bpf_sk_storage_get(&npm_sk_shaping, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
                if (ss) {
                    if (ss->ifindex != skb->ifindex)
                        ss->ifindex = skb->ifindex;
                    if (ss->credit >= (__s64)len) {
                        __sync_fetch_and_add(&ss->credit, -(__s64)len);
                        return NPM_PASS; /* judged, charged and counted at the socket */
                    }
                }
            }
            few = npm_few_in_flight(bpf_tcp_sock(sk));
        }
        __u64 ahead = npm_ahead(t, skb->tstamp, now);
        int outcome = npm_egress_rule(cfg, ahead, len, few);
        if (outcome == NPM_BW_HORIZON_DROP) {
            npm_bw_count(&key, NPM_BW_HORIZON_DROP, len);
            return TC_ACT_SHOT;
        }
        if (ahead >= cfg->ecn_ns && bpf_skb_ecn_set_ce(skb) && outcome == NPM_BW_PASSED)
            outcome = NPM_BW_MARKED;
        st->t_next = now + ahead + npm_tx_time(len, rate);
        npm_bw_count(&key, outcome, len);
        return NPM_PASS;
    }
    __u64 full = now > cfg->burst_ns ? now - cfg->burst_ns : 0;
    if (t < full)
        t = full; /* a bucket cannot hold more than it is deep */
    if (t > now) {
        npm_bw_count(&key, NPM_BW_POLICED, len);
        return TC_ACT_SHOT;
    }
    st->t_next = t + npm_tx_time(len, rate);
    npm_bw_count(&key, NPM_BW_PASSED, len);
    return NPM_PASS;
}

#endif
