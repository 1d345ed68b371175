/* Flow verdicts: what the programs decided about a flow, reported to the agent with what decided it
 * (npm-agent flows). A flow is the local endpoint, the direction, the peer's address, the protocol and
 * the destination port, and the verdict: a client's retries from new source ports are one flow. Its
 * record (npm_verdict_flows, an LRU) counts its packets; its first packet is reported at once, and a
 * summary of its counts at most once an interval while packets keep coming (the agent reads the
 * records' counts too, so a flow that stops is counted whole). Reports go through a ring buffer
 * (npm_verdict_events) without waking the reader, which polls it; each CPU may send at most the
 * configured rate a second (a token bucket per CPU), and a report over the rate or finding the buffer
 * full is counted lost (npm_verdict_lost), never waited for: a report never delays or changes a verdict.
 * A new flow over the rate gets no record at all, so a flood of new flows costs a lookup and a token
 * check per packet, not an LRU insert.
 *
 * The attribution rides with the verdict: the number the deciding policy entry or endpoint carries
 * (policy.h: a value's upper 30 bits; the endpoint's isolation[] for a NetworkPolicy default deny),
 * which the agent gave what decided and never gives anything else (AttributionRefs). */
#ifndef NPM_VERDICTS_H
#define NPM_VERDICTS_H

#include "common.h"

/* npm_verdict_config.flags */
#define NPM_REPORT_DENIED 1
#define NPM_REPORT_ALLOWED 2

/* npm_verdict_event.verdict */
#define NPM_FLOW_ALLOWED 1
#define NPM_FLOW_DENIED 2

/* npm_verdict_event.reason (DropReason.code() in Java): 0 for allowed */
#define NPM_REASON_POLICY 1
#define NPM_REASON_NO_CONNECTION_STATE 2
#define NPM_REASON_BANDWIDTH_HORIZON 3
#define NPM_REASON_MALFORMED 4

/* npm_verdict_event.reporter */
#define NPM_REPORTER_TC 1
#define NPM_REPORTER_NETFILTER 2

/* npm_verdict_lost indices */
#define NPM_LOST_RATE 0
#define NPM_LOST_BUFFER 1

struct npm_verdict_config {
    __u32 flags;       /* NPM_REPORT_*; 0 (as created): nothing is reported */
    __u32 rate;        /* reports a second per CPU */
    __u64 interval_ns; /* a flow's summaries at most this often */
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct npm_verdict_config);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_verdict_config SEC(".maps");

struct npm_flow_key {
    __u32 endpoint;
    __u8 direction;
    __u8 verdict;
    __u8 reason;
    __u8 protocol;
    __u8 family;
    __u8 pad;
    __be16 port;       /* destination port */
    __u8 peer[16];     /* the other end: the destination for egress, the source for ingress */
};

struct npm_flow_record {
    __u64 first;       /* bpf_ktime_get_ns() of the record's first packet: also tells records apart */
    __u64 last;
    __u64 packets;
    __u64 bytes;
    __u64 reported;    /* when a report of it last went out */
    __u32 ref;         /* the attribution of the verdict */
    __u8 reporter;
    __u8 has_service;
    __be16 service_port;
    __u8 saddr[16];
    __u8 daddr[16];
    __u8 service[16];  /* the destination before DNAT, when it changed */
};

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 65536);
    __type(key, struct npm_flow_key);
    __type(value, struct npm_flow_record);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_verdict_flows SEC(".maps");

struct npm_verdict_event {
    struct npm_flow_key key;
    struct npm_flow_record record;
};

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 1 << 20);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_verdict_events SEC(".maps");

struct npm_verdict_budget {
    __u64 stamp;  /* when tokens were last added */
    __u64 tokens;
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct npm_verdict_budget);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_verdict_budget SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 2);
    __type(key, __u32);
    __type(value, __u64);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_verdict_lost SEC(".maps");

static __always_inline void npm_verdict_lose(__u32 why)
{
    __u64 *n = bpf_map_lookup_elem(&npm_verdict_lost, &why);
    if (n)
        *n += 1;
}

/* Takes one of this CPU's tokens: refilled at rate a second, at most rate held (a second's burst). */
static __always_inline int npm_verdict_token(__u32 rate, __u64 now)
{
    __u32 zero = 0;
    struct npm_verdict_budget *b = bpf_map_lookup_elem(&npm_verdict_budget, &zero);
    if (!b)
        return 0;
    __u64 elapsed = now - b->stamp;
    if (elapsed > 2000000000ULL)
        elapsed = 2000000000ULL; /* more than a second refills the bucket anyway; keeps the product small */
    __u64 add = elapsed * rate / 1000000000ULL;
    if (add) {
        __u64 t = b->tokens + add;
        b->tokens = t > rate ? rate : t;
        b->stamp = now;
    }
    if (!b->tokens)
        return 0;
    b->tokens -= 1;
    return 1;
}

/* Sends a report, a token of this CPU's taken already. */
static __always_inline void npm_verdict_send(const struct npm_flow_key *key, const struct npm_flow_record *rec)
{
    struct npm_verdict_event *e = bpf_ringbuf_reserve(&npm_verdict_events, sizeof(*e), 0);
    if (!e) {
        npm_verdict_lose(NPM_LOST_BUFFER);
        return;
    }
    __builtin_memcpy(&e->key, key, sizeof(*key));
    __builtin_memcpy(&e->record, rec, sizeof(*rec));
    bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP); /* the agent polls: no wakeup per report */
}

/* Records one packet of a flow and reports it as the configuration asks. p: the packet as judged (after
 * DNAT where the forward hook judged it); sent: as the pod sent it, when DNAT changed its destination
 * (NULL otherwise). */
static __always_inline void npm_verdict_report(__u32 endpoint, __u8 direction, __u8 verdict, __u8 reason, __u32 ref, __u8 reporter,
                                               const struct npm_packet *p, const struct npm_packet *sent, __u32 len)
{
    __u32 zero = 0;
    struct npm_verdict_config *cfg = bpf_map_lookup_elem(&npm_verdict_config, &zero);
    if (!cfg || !(cfg->flags & (verdict == NPM_FLOW_ALLOWED ? NPM_REPORT_ALLOWED : NPM_REPORT_DENIED)))
        return;
    struct npm_flow_key key = {};
    key.endpoint = endpoint;
    key.direction = direction;
    key.verdict = verdict;
    key.reason = reason;
    key.protocol = p->protocol;
    key.family = p->family;
    key.port = p->dport;
    __builtin_memcpy(key.peer, direction == NPM_EGRESS ? p->daddr : p->saddr, 16);
    __u64 now = bpf_ktime_get_ns();
    struct npm_flow_record *rec = bpf_map_lookup_elem(&npm_verdict_flows, &key);
    if (rec) {
        __sync_fetch_and_add(&rec->packets, 1);
        __sync_fetch_and_add(&rec->bytes, len);
        rec->last = now;
        if (now - rec->reported < cfg->interval_ns)
            return;
        rec->reported = now;
        if (npm_verdict_token(cfg->rate, now))
            npm_verdict_send(&key, rec);
        else
            npm_verdict_lose(NPM_LOST_RATE); /* the agent's sweep still reads its counts */
        return;
    }
    /* A new flow over the rate gets no record: counted lost, it costs a flood no LRU insert (an eviction);
     * its next packet tries again. */
    if (!npm_verdict_token(cfg->rate, now)) {
        npm_verdict_lose(NPM_LOST_RATE);
        return;
    }
    struct npm_flow_record fresh = {};
    fresh.first = now;
    fresh.last = now;
    fresh.packets = 1;
    fresh.bytes = len;
    fresh.reported = now;
    fresh.ref = ref;
    fresh.reporter = reporter;
    __builtin_memcpy(fresh.saddr, p->saddr, 16);
    __builtin_memcpy(fresh.daddr, p->daddr, 16);
    if (sent) {
        fresh.has_service = 1;
        fresh.service_port = sent->dport;
        __builtin_memcpy(fresh.service, sent->daddr, 16);
    }
    bpf_map_update_elem(&npm_verdict_flows, &key, &fresh, BPF_NOEXIST);
    npm_verdict_send(&key, &fresh);
}

#endif
