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

#define NPM_INGRESS 0 /* into the pod: judged at the host-side interface's egress */
#define NPM_EGRESS 1  /* out of the pod: judged at the host-side interface's ingress */

#define NPM_FAMILY_V4 4
#define NPM_FAMILY_V6 6

/* Peer identities the agent does not allocate: an address no ipcache entry covers, and the
 * wildcard a rule without peers is keyed by. Allocated identities start at 256. */
#define NPM_IDENTITY_WORLD 0
#define NPM_IDENTITY_ANY 0xffffffff

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
};

struct sctp_ports {
    __be16 source;
    __be16 dest;
};

/* Parses the packet; returns 0 for IPv4 and IPv6 it understands, -1 for anything else (which passes). */
static __always_inline int npm_parse(struct __sk_buff *skb, struct npm_packet *p)
{
    void *data = (void *)(long)skb->data;
    void *end = (void *)(long)skb->data_end;
    struct ethhdr *eth = data;
    if ((void *)(eth + 1) > end)
        return -1;
    __u32 l4 = 0;
    if (eth->h_proto == bpf_htons(ETH_P_IP)) {
        struct iphdr *ip = (void *)(eth + 1);
        if ((void *)(ip + 1) > end)
            return -1;
        p->family = NPM_FAMILY_V4;
        p->protocol = ip->protocol;
        __builtin_memcpy(p->saddr, &ip->saddr, 4);
        __builtin_memcpy(p->daddr, &ip->daddr, 4);
        if (ip->frag_off & bpf_htons(0x1fff))
            return 0; /* a later fragment: no ports */
        l4 = sizeof(*eth) + ip->ihl * 4;
    } else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
        struct ipv6hdr *ip6 = (void *)(eth + 1);
        if ((void *)(ip6 + 1) > end)
            return -1;
        p->family = NPM_FAMILY_V6;
        p->protocol = ip6->nexthdr;
        __builtin_memcpy(p->saddr, &ip6->saddr, 16);
        __builtin_memcpy(p->daddr, &ip6->daddr, 16);
        l4 = sizeof(*eth) + sizeof(*ip6);
    } else {
        return -1;
    }
    if (p->protocol == IPPROTO_TCP || p->protocol == IPPROTO_UDP || p->protocol == IPPROTO_SCTP) {
        struct sctp_ports *ports = data + l4;
        if ((void *)(ports + 1) > end)
            return 0;
        p->sport = ports->source;
        p->dport = ports->dest;
    }
    return 0;
}

#endif
