/* Local pods, by the host-side interface their traffic crosses: which endpoint the interface
 * belongs to, which directions are judged and what a peer its policy entries do not name gets there
 * (a direction nothing judges is allowed whole, the "allow-all entry" of that direction), its rate
 * limits and the congestion control its TCP connections get. These live here, in the versioned state,
 * so a pod's rate or congestion control change and its policy change reach packets and sockets at the
 * same flip. */
#ifndef NPM_ENDPOINT_H
#define NPM_ENDPOINT_H

#include "common.h"

struct npm_endpoint_key {
    __u32 ifindex;
    __u8 version;
    __u8 pad[3];
};

/* npm_endpoint.judged, by direction. 0 and 1 are what an agent before tiers wrote (isolated or not). */
#define NPM_JUDGED_OPEN 0          /* nothing judges the direction: everything passes */
#define NPM_JUDGED_MISS_DENIED 1   /* NetworkPolicy isolates the pod: what Admin hands on and its entries miss is dropped */
#define NPM_JUDGED_MISS_ALLOWED 2  /* only ClusterNetworkPolicy tiers judge: what no tier decides passes */

/* npm_endpoint.tiers[direction]: the policy map tables of the pod side's ClusterNetworkPolicy tier
 * lists (policy.h), shared by the pods whose lists are the same; 0: no list. */
#define NPM_TIER_ADMIN 0
#define NPM_TIER_BASELINE 1

struct npm_endpoint {
    __u32 id;
    __u8 judged[2]; /* by direction (NPM_INGRESS, NPM_EGRESS): NPM_JUDGED_* */
    __u8 pad[2];
    __u64 rate[2];    /* bits per second by direction, 0: no limit (bandwidth.h) */
    char congestion[NPM_TCP_CA_NAME_MAX]; /* NUL-terminated; empty: the namespace's default (congestion.h) */
    __u32 tiers[2][2]; /* by direction, then NPM_TIER_ADMIN, NPM_TIER_BASELINE: table numbers, 0: none */
    __u32 isolation[2]; /* by direction: the number of the NetworkPolicies isolating the pod (verdicts.h), 0: none */
};

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 4096);
    __type(key, struct npm_endpoint_key);
    __type(value, struct npm_endpoint);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_endpoints SEC(".maps");

#endif
