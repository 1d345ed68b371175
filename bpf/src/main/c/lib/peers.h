/* Who a peer address is: the ipcache, a longest-prefix-match trie over pod addresses (/32, /128:
 * the pod's peer class, which is its identity and the ipBlock atom its address falls in) and every
 * prefix an ipBlock or except names (that atom's class). An address no entry covers is WORLD. */
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
    __u32 identity;
};

struct {
    __uint(type, BPF_MAP_TYPE_LPM_TRIE);
    __uint(max_entries, 262144);
    __type(key, struct npm_ipcache_key);
    __type(value, struct npm_ipcache_value);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_ipcache SEC(".maps");

static __always_inline __u32 npm_identity(__u8 version, __u8 family, const __u8 *addr)
{
    struct npm_ipcache_key key = {};
    key.prefixlen = 32 + (family == NPM_FAMILY_V4 ? 32 : 128);
    key.version = version;
    key.family = family;
    __builtin_memcpy(key.addr, addr, 16);
    struct npm_ipcache_value *v = bpf_map_lookup_elem(&npm_ipcache, &key);
    return v ? v->identity : NPM_IDENTITY_WORLD;
}

#endif
