/* Connection tracking, so replies of allowed connections pass and established flows keep working:
 * an entry per endpoint and flow, in the direction the endpoint first allowed it. A packet of that
 * flow in the same direction is established; one in the other direction with the tuple reversed is a
 * reply. Entries are per endpoint, so one side allowing a flow never lets it past the other side.
 *
 * A TCP SYN without ACK opens a new connection and is always judged by policy, even on a tuple an
 * entry knows: clients reuse source ports within seconds of a close, and a new connection must meet
 * the policy of now, not the one its tuple's last connection met (netfilter's conntrack also treats
 * a SYN on a closed tuple as NEW). A FIN each way, or a RST, shortens the entry's life to the last
 * segments' (a half-closed connection may still send for hours). */
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
    __u8 closing; /* NPM_CT_FIN_* seen, NPM_CT_RST: once closed, the flow lives NPM_CT_CLOSING_NS more */
    __u8 pad[6];
};

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 262144);
    __type(key, struct npm_ct_key);
    __type(value, struct npm_ct_value);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_ct SEC(".maps");

/* The key of a packet's flow as this endpoint sent or received it. */
static __always_inline struct npm_ct_key npm_ct_key_of(__u32 endpoint, const struct npm_packet *p)
{
    struct npm_ct_key key = {};
    key.endpoint = endpoint;
    key.family = p->family;
    key.protocol = p->protocol;
    key.sport = p->sport;
    key.dport = p->dport;
    __builtin_memcpy(key.saddr, p->saddr, 16);
    __builtin_memcpy(key.daddr, p->daddr, 16);
    return key;
}

/* How long a flow stays known without a packet: long for TCP, whose connections idle for hours
 * (Cilium's default); for a closing TCP flow, enough for the last ACKs and retransmitted FINs
 * (Cilium's too); for the rest, whose "connections" are guesses, conntrack's default for UDP (30 s),
 * so every backend forgets a quiet flow alike. Expired, a packet is judged by policy again. */
#define NPM_CT_TCP_NS (6ULL * 3600 * 1000000000ULL)
#define NPM_CT_CLOSING_NS (10ULL * 1000000000ULL)
#define NPM_CT_OTHER_NS (30ULL * 1000000000ULL)

#define NPM_TCP_FIN 0x01
#define NPM_TCP_SYN 0x02
#define NPM_TCP_RST 0x04
#define NPM_TCP_ACK 0x10

#define NPM_CT_FIN_ONE_WAY 0x01 /* in the entry's direction */
#define NPM_CT_FIN_OTHER_WAY 0x02
#define NPM_CT_RST 0x04

static __always_inline int npm_ct_closed(const struct npm_ct_value *v)
{
    return (v->closing & NPM_CT_RST) || (v->closing & (NPM_CT_FIN_ONE_WAY | NPM_CT_FIN_OTHER_WAY)) == (NPM_CT_FIN_ONE_WAY | NPM_CT_FIN_OTHER_WAY);
}

static __always_inline int npm_ct_live(struct npm_ct_value *v, __u8 protocol, __u64 now)
{
    __u64 lifetime = protocol != IPPROTO_TCP ? NPM_CT_OTHER_NS : npm_ct_closed(v) ? NPM_CT_CLOSING_NS : NPM_CT_TCP_NS;
    return now - v->last_seen < lifetime;
}

/* A packet of a flow an entry knows (the other way round: a reply): keeps it alive, notes a close. */
static __always_inline void npm_ct_touch(struct npm_ct_value *v, const struct npm_packet *p, __u64 now, int reply)
{
    v->last_seen = now;
    if (p->tcp_flags & NPM_TCP_RST)
        v->closing |= NPM_CT_RST;
    if (p->tcp_flags & NPM_TCP_FIN)
        v->closing |= reply ? NPM_CT_FIN_OTHER_WAY : NPM_CT_FIN_ONE_WAY;
}

/* Returns 1 if the packet belongs to a flow the endpoint already allowed (either way round). */
static __always_inline int npm_ct_known(__u32 endpoint, __u8 direction, const struct npm_packet *p)
{
    if (p->protocol == IPPROTO_TCP && (p->tcp_flags & (NPM_TCP_SYN | NPM_TCP_ACK)) == NPM_TCP_SYN)
        return 0; /* a new connection: judged by policy, whatever the tuple's past */
    __u64 now = bpf_ktime_get_ns();
    struct npm_ct_key key = npm_ct_key_of(endpoint, p);
    struct npm_ct_value *v = bpf_map_lookup_elem(&npm_ct, &key);
    if (v && v->direction == direction && npm_ct_live(v, p->protocol, now)) {
        npm_ct_touch(v, p, now, 0);
        return 1;
    }
    key.sport = p->dport;
    key.dport = p->sport;
    __builtin_memcpy(key.saddr, p->daddr, 16);
    __builtin_memcpy(key.daddr, p->saddr, 16);
    v = bpf_map_lookup_elem(&npm_ct, &key);
    if (v && v->direction != direction && npm_ct_live(v, p->protocol, now)) {
        npm_ct_touch(v, p, now, 1);
        return 1;
    }
    return 0;
}

static __always_inline void npm_ct_create(__u32 endpoint, __u8 direction, const struct npm_packet *p)
{
    struct npm_ct_key key = npm_ct_key_of(endpoint, p);
    struct npm_ct_value v = {};
    v.last_seen = bpf_ktime_get_ns();
    v.direction = direction;
    bpf_map_update_elem(&npm_ct, &key, &v, BPF_ANY);
}

#endif
