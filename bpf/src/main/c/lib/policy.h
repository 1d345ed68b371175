/* What a new connection's peer gets: a longest-prefix-match trie keyed by owner, direction, peer
 * identity, protocol and port, the port range of a rule split into masked prefixes. An entry whose prefix
 * stops before the protocol covers every protocol (a rule without ports). A peer no rule names is keyed
 * by NPM_IDENTITY_ANY. Owners are of two kinds:
 *  - a local pod's endpoint id: what its NetworkPolicies admit (ALLOW entries only);
 *  - a ClusterNetworkPolicy tier table (endpoint.h, npm_endpoint.tiers): one Admin or Baseline list of
 *    policies in priority order, shared by every pod side that walks the same list; each entry carries the
 *    tier's verdict for what it covers (ALLOW, DENY, or NEXT: a Pass rule, on to the next part), which
 *    the agent computes: the order of policies and rules (priority) lives in the agent alone, never here.
 * npm_judge() walks them: Admin; then, where NetworkPolicy isolates the pod, its entries decide; else
 * Baseline; then allow. In each lookup the peer's class is tried first, then its atom (peers.h; an address
 * in an ipBlock atom that only the atom's rules name needs no entry of its own), then ANY; where none hits,
 * the tier hands on and NetworkPolicy denies. */
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

/* npm_policy_value.verdict: the verdict in its low two bits, and above them the number of what decides
 * it (verdicts.h: the attribution a flow report carries; 0 for none). An agent before tiers wrote 1
 * (admitted, no number) in every entry, as NetworkPolicy entries still are. A verdict other than ALLOW
 * or NEXT denies (fail closed); NEXT only in a tier table's entries. */
#define NPM_VERDICT_ALLOW 1
#define NPM_VERDICT_DENY 2
#define NPM_VERDICT_NEXT 3
#define NPM_VERDICT_MASK 3
#define NPM_REF_SHIFT 2

struct npm_policy_value {
    __u32 verdict; /* NPM_VERDICT_* | ref << NPM_REF_SHIFT */
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

/* The verdict of an owner's entries for the peer: its class, else its atom unless NPM_ATOM_NONE, else
 * ANY unless only the class's own entries count (the node's addresses); 0 where none covers the packet. */
static __always_inline __u32 npm_lookup(__u8 version, __u8 direction, __u32 owner, __u32 identity, __u32 atom, int any,
                                        const struct npm_packet *p)
{
    struct npm_policy_value *v = npm_policy_entry(version, direction, owner, identity, p);
    if (!v && atom != NPM_ATOM_NONE)
        v = npm_policy_entry(version, direction, owner, atom, p);
    if (!v && any)
        v = npm_policy_entry(version, direction, owner, NPM_IDENTITY_ANY, p);
    return v ? v->verdict : 0;
}

/* A tier's verdict (with its number): its table's entry, or NEXT (no table, or none covers the packet). */
static __always_inline __u32 npm_tier(__u8 version, __u8 direction, __u32 table, __u32 identity, __u32 atom, int any,
                                      const struct npm_packet *p)
{
    __u32 v = table ? npm_lookup(version, direction, table, identity, atom, any, p) : 0;
    return v ? v : NPM_VERDICT_NEXT;
}

/* Whether the node itself is one of its addresses' identities (HOST, or a node identity per atom). */
static __always_inline int npm_is_node(__u32 identity)
{
    return identity == NPM_IDENTITY_HOST || (identity >= NPM_IDENTITY_NODE_BASE && identity < NPM_IDENTITY_POD_CLASS_BASE);
}

/* A final tier verdict: ALLOW as it is, anything else a DENY keeping its number. */
static __always_inline __u32 npm_final(__u32 v)
{
    return (v & NPM_VERDICT_MASK) == NPM_VERDICT_ALLOW ? v : NPM_VERDICT_DENY | (v & ~NPM_VERDICT_MASK);
}

/* What the pod side does with the peer, ALLOW or DENY with the number of what decided: the Admin table;
 * then, where NetworkPolicy isolates the pod, its entries (a miss drops: the number is the pod's
 * isolation's, every policy that isolates it); else the Baseline table; then allow. A tier's value other
 * than ALLOW or NEXT denies. The node's own addresses: NetworkPolicy always admits them (kubelet's probes,
 * node-local services), and only a tier's entries for the node identity itself count (ClusterNetworkPolicy
 * egress rules whose networks hold the node's address); HOST, in no such prefix, is admitted. */
static __always_inline __u32 npm_judge(__u8 version, __u8 direction, const struct npm_endpoint *ep, __u32 identity, __u32 atom,
                                       const struct npm_packet *p)
{
    if (identity == NPM_IDENTITY_HOST)
        return NPM_VERDICT_ALLOW;
    int node = npm_is_node(identity);
    const __u32 *tiers = ep->tiers[direction & 1];
    __u32 v = npm_tier(version, direction, tiers[NPM_TIER_ADMIN], identity, atom, !node, p);
    if ((v & NPM_VERDICT_MASK) != NPM_VERDICT_NEXT)
        return npm_final(v);
    if (ep->judged[direction & 1] != NPM_JUDGED_MISS_ALLOWED) { /* isolated by NetworkPolicy */
        if (node)
            return NPM_VERDICT_ALLOW;
        v = npm_lookup(version, direction, ep->id, identity, atom, 1, p);
        return (v & NPM_VERDICT_MASK) == NPM_VERDICT_ALLOW ? v : NPM_VERDICT_DENY | ep->isolation[direction & 1] << NPM_REF_SHIFT;
    }
    v = npm_tier(version, direction, tiers[NPM_TIER_BASELINE], identity, atom, !node, p);
    return (v & NPM_VERDICT_MASK) == NPM_VERDICT_NEXT ? NPM_VERDICT_ALLOW : npm_final(v);
}

#endif
