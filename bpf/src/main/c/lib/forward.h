/* Traffic through a Service, judged after kube-proxy's DNAT and before any SNAT it adds.
 *
 * Egress to an address that may be a Service's: judged after kube-proxy's DNAT, on the backend it
 * chose. At the pod's interface (tc) the destination is still the ClusterIP, which is no pod; so a
 * packet of a pod whose egress is judged (NetworkPolicy isolation, or a ClusterNetworkPolicy) to an
 * address that is no pod (WORLD, or an ipBlock's atom) is not judged there but marked
 * (NPM_MARK_DEFERRED) and judged at the netfilter forward (and local-in) hook, where the destination
 * is the backend's. What that hook admits is remembered in npm_ct under the tuple the pod sent
 * (conntrack's original tuple: the ClusterIP's), so the flow's later packets and its replies, which
 * come back from the ClusterIP, pass at tc as any other flow's. Only while the
 * hook is attached for the family (npm_forward_hooks) does tc defer; without it, tc judges the
 * ClusterIP itself, which admits less, never more.
 *
 * Ingress to a local pod through a Service: kube-proxy masquerades some of it in POSTROUTING (a pod
 * reaching itself, hairpin; all of it with --masquerade-all; NodePort traffic with
 * externalTrafficPolicy Cluster), so at the pod's interface (tc) the source is the node's address,
 * which is always admitted. So the first packet of every translated connection to a
 * local pod whose ingress is judged (conntrack NEW, destination changed by DNAT) is judged here too, at
 * forward, on the source it had before SNAT, as the netfilter backends judge it. tc judges it again
 * on what it sees: the same source (the same verdict) or the node's (admitted).
 *
 * Where pods sit on a bridge the way out is the bridge, not the pod's interface: the hook finds the
 * pod by the connection's destination address then (npm_local).
 *
 * A pod reaching itself through its Service (hairpin: DNAT sends it back to the pod it came from) is
 * judged as traffic to any other pod: its egress with the pod itself as the destination, its ingress
 * with the pod itself as the source (before kube-proxy's SNAT), as cyclonus expects. To its own
 * address it never leaves the pod, and nothing here sees it.
 *
 * The kernel structs are read with CO-RE (libbpf relocates these fields against the running
 * kernel's BTF); the uapi headers here predate netfilter programs. */
#ifndef NPM_FORWARD_H
#define NPM_FORWARD_H

#include "common.h"
#include "ct.h"
#include "endpoint.h"
#include <bpf/bpf_core_read.h>

/* The agent's one packet-mark bit, the netfilter backends' too (never kube-proxy's 0x4000 or
 * 0x8000). Set at tc, read at the forward hook of the same host: it never leaves the node. */
#define NPM_MARK_DEFERRED 0x20000

#define NPM_NF_DROP 0
#define NPM_NF_ACCEPT 1

/* npm_forward_hooks's bits: the hooks are attached for IPv4, for IPv6 (the agent sets a family's bit
 * once all its links exist; uninstall detaches tc before it removes the links). */
#define NPM_FORWARD_V4 1
#define NPM_FORWARD_V6 2

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u32);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_forward_hooks SEC(".maps");

/* The pod each deferred packet came from, by the tuple it was sent with (npm_ct_key, endpoint 0):
 * tc writes it as it defers, the forward hook reads it. The hook cannot tell the pod by the
 * interface a packet came in from wherever pods sit on a bridge (the CNI bridge plugin's cni0): a
 * packet a pod sends to a ClusterIP is routed by the node, so it comes in from the bridge, whichever
 * pod sent it. The value is the pod's interface (its npm_endpoints key). LRU: an entry is needed
 * only until the hook has seen the packet, which then makes the flow's npm_ct entry. */
struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 16384);
    __type(key, struct npm_ct_key);
    __type(value, __u32);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_deferred SEC(".maps");

/* The local pods' addresses, per copy of the state (the agent writes them with npm_endpoints): an
 * address to its pod's interface, the pod's npm_endpoints key. Where pods sit on a bridge the way
 * out the forward hook sees is the bridge, not a pod's interface: it finds by this the pod a
 * translated connection goes to. */
struct npm_local_key {
    __u8 version;
    __u8 family;
    __u8 pad[2];
    __u8 addr[16];
};

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 8192);
    __type(key, struct npm_local_key);
    __type(value, __u32);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_local SEC(".maps");

/* The interface of the local pod with this address in this copy of the state, or 0. */
static __always_inline __u32 npm_local_interface(__u8 version, __u8 family, const __u8 *addr)
{
    struct npm_local_key key = { .version = version, .family = family };
    __builtin_memcpy(key.addr, addr, 16);
    __u32 *ifindex = bpf_map_lookup_elem(&npm_local, &key);
    return ifindex ? *ifindex : 0;
}

/* At tc: leave the packet to the forward hook, remembering which pod's interface it came from. */
static __always_inline void npm_defer(struct __sk_buff *skb, const struct npm_packet *p)
{
    struct npm_ct_key key = npm_ct_key_of(0, p);
    __u32 ifindex = skb->ifindex;
    bpf_map_update_elem(&npm_deferred, &key, &ifindex, BPF_ANY);
    skb->mark |= NPM_MARK_DEFERRED;
}

/* At the forward hook: the interface of the pod that sent this deferred packet (sent: conntrack's
 * original tuple, as tc saw it), or 0 if tc left no record. */
static __always_inline __u32 npm_deferred_from(const struct npm_packet *sent)
{
    struct npm_ct_key key = npm_ct_key_of(0, sent);
    __u32 *ifindex = bpf_map_lookup_elem(&npm_deferred, &key);
    return ifindex ? *ifindex : 0;
}

/* ctinfo in the low bits of skb->_nfct: IP_CT_IS_REPLY and above are the reply direction. */
#define NPM_NFCT_INFOMASK 7UL
#define NPM_IP_CT_NEW 2
#define NPM_IP_CT_IS_REPLY 3

struct net_device {
    int ifindex;
} __attribute__((preserve_access_index));

struct nf_hook_state {
    __u8 pf;
    struct net_device *in;
    struct net_device *out;
} __attribute__((preserve_access_index));

struct sk_buff {
    unsigned int len;
    __u32 mark;
    unsigned long _nfct;
    unsigned char *head;
    __u16 network_header;
} __attribute__((preserve_access_index));

union nf_inet_addr {
    __u32 all[4];
} __attribute__((preserve_access_index));

struct nf_conntrack_man {
    union nf_inet_addr u3;
    union {
        __be16 all;
    } u;
} __attribute__((preserve_access_index));

struct nf_conntrack_tuple {
    struct nf_conntrack_man src;
    struct {
        union nf_inet_addr u3;
        union {
            __be16 all;
        } u;
        __u8 protonum;
    } dst;
} __attribute__((preserve_access_index));

struct nf_conntrack_tuple_hash {
    struct nf_conntrack_tuple tuple;
} __attribute__((preserve_access_index));

struct nf_conn {
    struct nf_conntrack_tuple_hash tuplehash[2];
} __attribute__((preserve_access_index));

/* The context of a BPF_PROG_TYPE_NETFILTER program (include/net/netfilter/nf_bpf_link.h). */
struct bpf_nf_ctx {
    const struct nf_hook_state *state;
    struct sk_buff *skb;
};

/* Whether tc may leave a packet of this family to the forward hook. */
static __always_inline int npm_forward_hook(__u8 family)
{
    __u32 zero = 0;
    __u32 *hooks = bpf_map_lookup_elem(&npm_forward_hooks, &zero);
    return hooks && (*hooks & (family == NPM_FAMILY_V4 ? NPM_FORWARD_V4 : NPM_FORWARD_V6));
}

/* The packet as it is now (after DNAT) into *p, from its network header; 0, or -1 when unreadable. */
static __always_inline int npm_forward_parse(struct sk_buff *skb, __u8 family, struct npm_packet *p)
{
    unsigned char *head = BPF_CORE_READ(skb, head);
    __u16 nh = BPF_CORE_READ(skb, network_header);
    unsigned char *ip = head + nh;
    __u32 l4;
    if (family == NPM_FAMILY_V4) {
        struct iphdr h;
        if (bpf_probe_read_kernel(&h, sizeof(h), ip))
            return -1;
        p->family = NPM_FAMILY_V4;
        p->protocol = h.protocol;
        __builtin_memcpy(p->saddr, &h.saddr, 4);
        __builtin_memcpy(p->daddr, &h.daddr, 4);
        if (h.frag_off & bpf_htons(0x1fff))
            return 0; /* a later fragment: no ports (conntrack reassembles before this hook) */
        l4 = (h.ihl & 0xf) * 4;
    } else {
        struct ipv6hdr h;
        if (bpf_probe_read_kernel(&h, sizeof(h), ip))
            return -1;
        p->family = NPM_FAMILY_V6;
        p->protocol = h.nexthdr;
        __builtin_memcpy(p->saddr, &h.saddr, 16);
        __builtin_memcpy(p->daddr, &h.daddr, 16);
        l4 = sizeof(h);
    }
    if (p->protocol == IPPROTO_TCP || p->protocol == IPPROTO_UDP || p->protocol == IPPROTO_SCTP) {
        __be16 ports[2];
        if (bpf_probe_read_kernel(ports, sizeof(ports), ip + l4) == 0) {
            p->sport = ports[0];
            p->dport = ports[1];
        }
    }
    return 0;
}

static __always_inline int npm_same_address(const __u8 *a, const __u8 *b)
{
    __u32 x[4], y[4]; /* word by word: BPF has no memcmp */
    __builtin_memcpy(x, a, 16);
    __builtin_memcpy(y, b, 16);
    return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3];
}

/* Whether DNAT changed the packet's destination: the tuple it was sent with is not the one it has. */
static __always_inline int npm_translated(const struct npm_packet *sent, const struct npm_packet *now)
{
    return !npm_same_address(sent->daddr, now->daddr) || sent->dport != now->dport;
}

/* The tuple the pod sent, before any DNAT: conntrack's original tuple when the packet has one and
 * travels that way, else the packet's own. */
static __always_inline void npm_forward_original(struct sk_buff *skb, const struct npm_packet *now,
                                                 struct npm_packet *sent)
{
    *sent = *now;
    unsigned long nfct = BPF_CORE_READ(skb, _nfct);
    struct nf_conn *ct = (struct nf_conn *)(nfct & ~NPM_NFCT_INFOMASK);
    if (!ct || (nfct & NPM_NFCT_INFOMASK) >= NPM_IP_CT_IS_REPLY)
        return;
    struct nf_conntrack_tuple *t = &ct->tuplehash[0].tuple;
    __u8 proto = 0;
    if (bpf_core_read(&proto, sizeof(proto), &t->dst.protonum) || proto != now->protocol)
        return;
    struct npm_packet o = *now;
    if (bpf_core_read(o.saddr, 16, &t->src.u3) || bpf_core_read(o.daddr, 16, &t->dst.u3))
        return;
    if (now->family == NPM_FAMILY_V4) { /* the union's other 12 bytes are not ours to compare */
        __builtin_memset(o.saddr + 4, 0, 12);
        __builtin_memset(o.daddr + 4, 0, 12);
    }
    if (now->protocol == IPPROTO_TCP || now->protocol == IPPROTO_UDP || now->protocol == IPPROTO_SCTP) {
        if (bpf_core_read(&o.sport, sizeof(o.sport), &t->src.u.all) || bpf_core_read(&o.dport, sizeof(o.dport), &t->dst.u.all))
            return;
    }
    *sent = o;
}

#endif
