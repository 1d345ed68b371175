/* Connection tracking, so replies of allowed connections pass and established flows keep working:
 * an entry per endpoint and flow, in the direction the endpoint first allowed it. A packet of that
 * flow in the same direction is established; one in the other direction with the tuple reversed is a
 * reply. Entries are per endpoint, so one side allowing a flow never lets it past the other side. */
#ifndef NPM_CT_H
#define NPM_CT_H

#include "common.h"

struct npm_ct_key {
    __u32 endpoint;
    __u8 family;
    __u8 protocol;
    __be16 sport;
    __be16 dport;
    __u8 pad[2];
    __u8 saddr[16];
    __u8 daddr[16];
};

struct npm_ct_value {
    __u64 last_seen; /* bpf_ktime_get_ns */
    __u8 direction;
    __u8 pad[7];
};

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 262144);
    __type(key, struct npm_ct_key);
    __type(value, struct npm_ct_value);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_ct SEC(".maps");

/* How long a flow stays known without a packet, as Cilium's defaults: long for TCP, whose
 * connections idle for hours; short for the rest, whose "connections" are guesses (conntrack keeps
 * unreplied UDP 30 s, streams 120 s). Expired, a packet is judged by policy again. */
#define NPM_CT_TCP_NS (6ULL * 3600 * 1000000000ULL)
#define NPM_CT_OTHER_NS (120ULL * 1000000000ULL)

static __always_inline int npm_ct_live(struct npm_ct_value *v, __u8 protocol, __u64 now)
{
    __u64 lifetime = protocol == IPPROTO_TCP ? NPM_CT_TCP_NS : NPM_CT_OTHER_NS;
    return now - v->last_seen < lifetime;
}

/* Returns 1 if the packet belongs to a flow the endpoint already allowed (either way round). */
static __always_inline int npm_ct_known(__u32 endpoint, __u8 direction, const struct npm_packet *p)
{
    __u64 now = bpf_ktime_get_ns();
    struct npm_ct_key key = {};
    key.endpoint = endpoint;
    key.family = p->family;
    key.protocol = p->protocol;
    key.sport = p->sport;
    key.dport = p->dport;
    __builtin_memcpy(key.saddr, p->saddr, 16);
    __builtin_memcpy(key.daddr, p->daddr, 16);
    struct npm_ct_value *v = bpf_map_lookup_elem(&npm_ct, &key);
    if (v && v->direction == direction && npm_ct_live(v, p->protocol, now)) {
        v->last_seen = now;
        return 1;
    }
    key.sport = p->dport;
    key.dport = p->sport;
    __builtin_memcpy(key.saddr, p->daddr, 16);
    __builtin_memcpy(key.daddr, p->saddr, 16);
    v = bpf_map_lookup_elem(&npm_ct, &key);
    if (v && v->direction != direction && npm_ct_live(v, p->protocol, now)) {
        v->last_seen = now;
        return 1;
    }
    return 0;
}

static __always_inline void npm_ct_create(__u32 endpoint, __u8 direction, const struct npm_packet *p)
{
    struct npm_ct_key key = {};
    key.endpoint = endpoint;
    key.family = p->family;
    key.protocol = p->protocol;
    key.sport = p->sport;
    key.dport = p->dport;
    __builtin_memcpy(key.saddr, p->saddr, 16);
    __builtin_memcpy(key.daddr, p->daddr, 16);
    struct npm_ct_value v = {};
    v.last_seen = bpf_ktime_get_ns();
    v.direction = direction;
    bpf_map_update_elem(&npm_ct, &key, &v, BPF_ANY);
}

#endif
