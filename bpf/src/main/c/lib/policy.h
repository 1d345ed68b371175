/* What each local pod admits: a longest-prefix-match trie keyed by endpoint, direction, peer
 * identity, protocol and port, the port range of a rule split into masked prefixes. An entry whose
 * prefix stops before the protocol admits every protocol (a rule without ports). A rule without
 * peers is keyed by NPM_IDENTITY_ANY. A packet is admitted when its peer's identity, or ANY, hits. */
#ifndef NPM_POLICY_H
#define NPM_POLICY_H

#include "common.h"

struct npm_policy_key {
    __u32 prefixlen; /* 96 for any protocol, 112 + port prefix for one protocol */
    __u8 version;
    __u8 direction;
    __u8 pad[2];
    __u32 endpoint;
    __u32 identity;
    __u8 protocol;
    __u8 pad2;
    __be16 port;
};

struct npm_policy_value {
    __u32 rules; /* how many rules admit this entry: for inspection */
};

struct {
    __uint(type, BPF_MAP_TYPE_LPM_TRIE);
    __uint(max_entries, 1048576);
    __type(key, struct npm_policy_key);
    __type(value, struct npm_policy_value);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_policy SEC(".maps");

static __always_inline int npm_admitted(__u8 version, __u8 direction, __u32 endpoint, __u32 identity,
                                        const struct npm_packet *p)
{
    struct npm_policy_key key = {};
    key.prefixlen = 128;
    key.version = version;
    key.direction = direction;
    key.endpoint = endpoint;
    key.identity = identity;
    key.protocol = p->protocol;
    key.port = p->dport;
    if (bpf_map_lookup_elem(&npm_policy, &key))
        return 1;
    key.identity = NPM_IDENTITY_ANY;
    return bpf_map_lookup_elem(&npm_policy, &key) != 0;
}

#endif
