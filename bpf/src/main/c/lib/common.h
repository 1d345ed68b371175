/* Shared by every program and by nothing else: the packet view and the constants Java mirrors.
 * Every struct here has one Java layout in io.npmagent.bpf.maps and a golden-bytes test. */
#ifndef NPM_COMMON_H
#define NPM_COMMON_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* TCP_CA_NAME_MAX: the longest congestion control name, with its NUL. */
#define NPM_TCP_CA_NAME_MAX 16

#define NPM_INGRESS 0 /* into the pod: judged at the host-side interface's egress */
#define NPM_EGRESS 1  /* out of the pod: judged at the host-side interface's ingress */

/* A packet the programs let through goes on to the next filter on the hook (a CNI's, the bandwidth
 * program's): TC_ACT_OK would end classification there, since ours is first and direct-action. With
 * no filter after ours, the kernel treats it as OK. */
#define NPM_PASS TC_ACT_UNSPEC

#define NPM_FAMILY_V4 4
#define NPM_FAMILY_V6 6

/* Peer identities the agent does not allocate: an address no ipcache entry covers; the node's own
 * addresses that no ipBlock or networks prefix holds; and the wildcard a rule without peers is keyed
 * by. Allocated identities start at 256. */
#define NPM_IDENTITY_WORLD 0
#define NPM_IDENTITY_HOST 1
#define NPM_IDENTITY_ANY 0xffffffff
/* The node's own addresses inside an ipBlock or networks prefix: one identity per such prefix (atom),
 * up to the pod classes'. Like HOST, admitted unless the pod's own entries for it deny (policy.h). */
#define NPM_IDENTITY_NODE_BASE 0x10000000
#define NPM_IDENTITY_POD_CLASS_BASE 0x20000000
/* Allocated peer classes from here on are ipBlock atoms: addresses that are no pod (BpfModel). */
#define NPM_IDENTITY_ATOM_BASE 0x40000000
/* An ipcache value's atom for an address in no atom, or whose class is the atom itself. */
#define NPM_ATOM_NONE 0

#ifndef IPPROTO_ICMPV6
#define IPPROTO_ICMPV6 58
#endif

#ifndef IPPROTO_SCTP
#define IPPROTO_SCTP 132
#endif

/* What a program needs to know of one packet: addresses as 16 bytes (IPv4 in the first 4),
 * protocol, and ports in network order (0 when the protocol has none or the packet is a fragment). */
struct npm_packet {
    __u8 family;
    __u8 protocol;
    __be16 sport;
    __be16 dport;
    __u8 saddr[16];
    __u8 daddr[16];
    __u8 kind; /* NPM_PLAIN, or what kind of ICMP message it is */
    __u8 tcp_flags; /* the outer TCP header's flags (0 for an ICMP error's inner header: it carries none) */
};

#define NPM_PLAIN 0
/* An ICMP error (unreachable, time exceeded, parameter problem, packet too big): the packet it is
 * about, whose header it carries, is parsed into the second npm_packet. Related to an allowed flow,
 * it passes, as conntrack's RELATED does in the netfilter backends (path MTU discovery needs it). */
#define NPM_ICMP_ERROR 1
/* IPv6 neighbour discovery and multicast listener messages: the link's own plumbing, never policy. */
#define NPM_LINK_CONTROL 2

struct sctp_ports {
    __be16 source;
    __be16 dest;
};

/* Ports of TCP, UDP and SCTP at data + off (they start all three the same way). */
static __always_inline void npm_parse_ports(void *data, void *end, __u32 off, struct npm_packet *p)
{
    if (p->protocol != IPPROTO_TCP && p->protocol != IPPROTO_UDP && p->protocol != IPPROTO_SCTP)
        return;
    struct sctp_ports *ports = data + off;
    if ((void *)(ports + 1) > end)
        return;
    p->sport = ports->source;
    p->dport = ports->dest;
}

/* The IP header at data + off into p (addresses, protocol); returns the offset of its payload, or 0
 * when there is none to read (truncated, or a later IPv4 fragment, which carries no ports). */
static __always_inline __u32 npm_parse_ip(void *data, void *end, __u32 off, __u8 family, struct npm_packet *p)
{
    if (family == NPM_FAMILY_V4) {
        struct iphdr *ip = data + off;
        if ((void *)(ip + 1) > end)
            return 0;
        p->family = NPM_FAMILY_V4;
        p->protocol = ip->protocol;
        __builtin_memcpy(p->saddr, &ip->saddr, 4);
        __builtin_memcpy(p->daddr, &ip->daddr, 4);
        if (ip->frag_off & bpf_htons(0x1fff))
            return 0;
        return off + (ip->ihl & 0xf) * 4;
    }
    struct ipv6hdr *ip6 = data + off;
    if ((void *)(ip6 + 1) > end)
        return 0;
    p->family = NPM_FAMILY_V6;
    p->protocol = ip6->nexthdr;
    __builtin_memcpy(p->saddr, &ip6->saddr, 16);
    __builtin_memcpy(p->daddr, &ip6->daddr, 16);
    __u32 next = off + sizeof(*ip6);
    /* A hop-by-hop options header (MLD carries one, for its router alert) comes first when present:
     * the protocol is the one after it. */
    if (p->protocol == IPPROTO_HOPOPTS) {
        struct ipv6_opt_hdr *hop = data + next;
        if ((void *)(hop + 1) > end)
            return 0;
        p->protocol = hop->nexthdr;
        next += ((__u32)hop->hdrlen + 1) * 8;
    }
    return next;
}

static __always_inline __u8 npm_icmp_kind(__u8 protocol, __u8 type)
{
    if (protocol == IPPROTO_ICMP)
        return type == 3 || type == 11 || type == 12 ? NPM_ICMP_ERROR : NPM_PLAIN;
    if (protocol == IPPROTO_ICMPV6) {
        if (type >= 1 && type <= 4)
            return NPM_ICMP_ERROR;
        if ((type >= 130 && type <= 137) || type == 143)
            return NPM_LINK_CONTROL;
    }
    return NPM_PLAIN;
}

/* Parses the packet, and for an ICMP error the packet it carries into *inner; returns 0 for IPv4
 * and IPv6, -1 for anything else (which passes: ARP, LLDP, ...). */
static __always_inline int npm_parse(struct __sk_buff *skb, struct npm_packet *p, struct npm_packet *inner)
{
    void *data = (void *)(long)skb->data;
    void *end = (void *)(long)skb->data_end;
    struct ethhdr *eth = data;
    if ((void *)(eth + 1) > end)
        return -1;
    __u8 family;
    if (eth->h_proto == bpf_htons(ETH_P_IP))
        family = NPM_FAMILY_V4;
    else if (eth->h_proto == bpf_htons(ETH_P_IPV6))
        family = NPM_FAMILY_V6;
    else
        return -1;
    __u32 l4 = npm_parse_ip(data, end, sizeof(*eth), family, p);
    if (!p->family)
        return -1; /* truncated IP header */
    if (!l4)
        return 0;
    npm_parse_ports(data, end, l4, p);
    if (p->protocol == IPPROTO_TCP) {
        __u8 *flags = data + l4 + 13;
        if ((void *)(flags + 1) <= end)
            p->tcp_flags = *flags;
    }
    if (p->protocol != IPPROTO_ICMP && p->protocol != IPPROTO_ICMPV6)
        return 0;
    __u8 *type = data + l4;
    if ((void *)(type + 1) > end)
        return 0;
    p->kind = npm_icmp_kind(p->protocol, *type);
    if (p->kind == NPM_ICMP_ERROR) {
        /* type, code, checksum and four more bytes, then the offending packet's header */
        __u32 inner_l4 = npm_parse_ip(data, end, l4 + 8, family, inner);
        if (!inner->family)
            p->kind = NPM_PLAIN; /* nothing to relate it to */
        else if (inner_l4)
            npm_parse_ports(data, end, inner_l4, inner);
    }
    return 0;
}

#endif
