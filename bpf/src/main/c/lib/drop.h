/* Packets and bytes dropped by policy, per endpoint and direction: npm_bpf_policy_drops_total. */
#ifndef NPM_DROP_H
#define NPM_DROP_H

#include "common.h"

struct npm_drop_key {
    __u32 endpoint;
    __u8 direction;
    __u8 pad[3];
};

struct npm_drop_value {
    __u64 packets;
    __u64 bytes;
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
    __uint(max_entries, 8192);
    __type(key, struct npm_drop_key);
    __type(value, struct npm_drop_value);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_drops SEC(".maps");

static __always_inline void npm_count_drop(__u32 endpoint, __u8 direction, __u32 len)
{
    struct npm_drop_key key = {};
    key.endpoint = endpoint;
    key.direction = direction;
    struct npm_drop_value *v = bpf_map_lookup_elem(&npm_drops, &key);
    if (v) {
        v->packets += 1;
        v->bytes += len;
    } else {
        struct npm_drop_value first = { .packets = 1, .bytes = len };
        bpf_map_update_elem(&npm_drops, &key, &first, BPF_NOEXIST);
    }
}

static __always_inline int npm_drop(__u32 endpoint, __u8 direction, struct __sk_buff *skb)
{
    npm_count_drop(endpoint, direction, skb->len);
    return TC_ACT_SHOT;
}

#endif
