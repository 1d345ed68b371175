/* Who a peer address is: the ipcache, a longest-prefix-match trie over pod addresses (/32, /128) and
 * every prefix an ipBlock or except names (an "atom"). A pod address maps to its peer class (its
 * identity and the atom its address falls in) and to that atom's number, which the policy lookup falls
 * back to where the class has no entry of its own (policy.h); an atom prefix maps to its own number as
 * class and to no atom (NPM_ATOM_NONE), as does a pod address in no atom. An address no entry covers is
 * WORLD, in no atom. */
#ifndef NPM_PEERS_H
#define NPM_PEERS_H

#include "common.h"

struct npm_ipcache_key {
    __u32 prefixlen; /* 32 + the address prefix: version, family and padding always match whole */
    __u8 version;
    __u8 family;
    __u8 pad[2];
    __u8 addr[16];
};

struct npm_ipcache_value {
    __u32 identity; /* the peer class */
    __u32 atom;     /* the class's atom, looked up where the class has no entry; NPM_ATOM_NONE: none */
};

/* Both copies of the state (a version bit in the key) of a cluster at Kubernetes' limit: 150,000
 * dual-stack pods are 300,000 addresses a copy, beside nodes and ipBlock prefixes. Without
 * preallocation the capacity costs nothing until used. */
struct {
    __uint(type, BPF_MAP_TYPE_LPM_TRIE);
    __uint(max_entries, 1048576);
    __type(key, struct npm_ipcache_key);
    __type(value, struct npm_ipcache_value);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_ipcache SEC(".maps");

/* A peer as the policy lookup needs it: its class, and the atom to fall back to. */
struct npm_peer {
    __u32 identity;
    __u32 atom;
};

static __always_inline struct npm_peer npm_identity(__u8 version, __u8 family, const __u8 *addr)
{
    struct npm_ipcache_key key = {};
    key.prefixlen = 32 + (family == NPM_FAMILY_V4 ? 32 : 128);
    key.version = version;
    key.family = family;
    __builtin_memcpy(key.addr, addr, 16);
    struct npm_ipcache_value *v = bpf_map_lookup_elem(&npm_ipcache, &key);
    struct npm_peer peer = { .identity = NPM_IDENTITY_WORLD, .atom = NPM_ATOM_NONE };
    if (v) {
        peer.identity = v->identity;
        peer.atom = v->atom;
    }
    return peer;
}

#endif
