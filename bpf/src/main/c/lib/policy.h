/* What each local pod decides about a new connection: a longest-prefix-match trie keyed by endpoint,
 * direction, peer identity, protocol and port, the port range of a rule split into masked prefixes. An
 * entry whose prefix stops before the protocol covers every protocol (a rule without ports). A peer no
 * rule names is keyed by NPM_IDENTITY_ANY. Each entry carries the final verdict of the pod's whole walk
 * for what it covers (ClusterNetworkPolicy Admin tier, NetworkPolicy, Baseline tier, default), which the
 * agent computes: the order of tiers, policies and rules (priority) lives in the agent alone, never
 * here. The peer's class is looked up first, then its atom (peers.h; an address in an ipBlock atom
 * that only the atom's rules name needs no entry of its own), then ANY; where none hits, the endpoint
 * says what a miss gets (endpoint.h). A pod that only NetworkPolicies judge has only ALLOW entries and
 * denies a miss, as before tiers. */
#ifndef NPM_POLICY_H
#define NPM_POLICY_H

#include "common.h"
#include "endpoint.h"

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

/* npm_policy_value.verdict. An agent before tiers wrote 1 (admitted) in every entry. Anything else
 * denies (fail closed). */
#define NPM_VERDICT_ALLOW 1
#define NPM_VERDICT_DENY 2

struct npm_policy_value {
    __u32 verdict; /* NPM_VERDICT_ALLOW or NPM_VERDICT_DENY */
};

struct {
    __uint(type, BPF_MAP_TYPE_LPM_TRIE);
    __uint(max_entries, 1048576);
    __type(key, struct npm_policy_key);
    __type(value, struct npm_policy_value);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_policy SEC(".maps");

/* The pod's longest entry for the identity covering the packet's protocol and port, or NULL. */
static __always_inline struct npm_policy_value *npm_policy_entry(__u8 version, __u8 direction, __u32 endpoint, __u32 identity,
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
    return bpf_map_lookup_elem(&npm_policy, &key);
}

/* Whether the pod's entries allow the peer (its class, else its atom unless NPM_ATOM_NONE, else ANY)
 * for the packet's protocol and port; a miss gets the endpoint's judgement of the direction
 * (NPM_JUDGED_MISS_ALLOWED or not). */
static __always_inline int npm_admitted(__u8 version, __u8 direction, __u32 endpoint, __u32 identity,
                                        __u32 atom, const struct npm_packet *p, __u8 judged)
{
    struct npm_policy_value *v = npm_policy_entry(version, direction, endpoint, identity, p);
    if (!v && atom != NPM_ATOM_NONE)
        v = npm_policy_entry(version, direction, endpoint, atom, p);
    if (!v)
        v = npm_policy_entry(version, direction, endpoint, NPM_IDENTITY_ANY, p);
    if (!v)
        return judged == NPM_JUDGED_MISS_ALLOWED;
    return v->verdict == NPM_VERDICT_ALLOW;
}

/* Whether the node itself is one of its addresses' identities (HOST, or a node identity per atom). */
static __always_inline int npm_is_node(__u32 identity)
{
    return identity == NPM_IDENTITY_HOST || (identity >= NPM_IDENTITY_NODE_BASE && identity < NPM_IDENTITY_POD_CLASS_BASE);
}

/* Whether the pod's entries admit its own node (an identity npm_is_node() holds): NetworkPolicy always
 * does, so only the identity's own entries, which ClusterNetworkPolicy rules holding the node's address
 * make, can deny it; no ANY entry and no miss verdict concern the node. */
static __always_inline int npm_node_admitted(__u8 version, __u8 direction, __u32 endpoint, __u32 identity,
                                             const struct npm_packet *p)
{
    struct npm_policy_value *v = npm_policy_entry(version, direction, endpoint, identity, p);
    return !v || v->verdict == NPM_VERDICT_ALLOW;
}

#endif
