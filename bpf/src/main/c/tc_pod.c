/* The programs on each local pod's host-side interface. A packet's verdict is decided in
 * npm_verdict(): replies and established flows pass (ct.h); otherwise, if the pod is isolated for
 * the direction, the peer's identity (peers.h) or ANY must be admitted by the pod's policy entries
 * (policy.h) in the copy of the state packets read now (state.h), else it is dropped and counted
 * (drop.h). Anything that is not IPv4 or IPv6, or crosses an interface that is no local pod's,
 * passes untouched. */
#include "lib/common.h"
#include "lib/state.h"
#include "lib/endpoint.h"
#include "lib/peers.h"
#include "lib/policy.h"
#include "lib/ct.h"
#include "lib/drop.h"

static __always_inline int npm_verdict(struct __sk_buff *skb, __u8 direction)
{
    struct npm_packet p = {};
    if (npm_parse(skb, &p) < 0)
        return TC_ACT_OK;
    __u8 version = npm_version();
    struct npm_endpoint_key ek = { .ifindex = skb->ifindex, .version = version };
    struct npm_endpoint *ep = bpf_map_lookup_elem(&npm_endpoints, &ek);
    if (!ep)
        return TC_ACT_OK;
    __u32 endpoint = ep->id;
    if (npm_ct_known(endpoint, direction, &p))
        return TC_ACT_OK;
    if (ep->isolated[direction & 1]) {
        const __u8 *peer = direction == NPM_EGRESS ? p.daddr : p.saddr;
        __u32 identity = npm_identity(version, p.family, peer);
        if (!npm_admitted(version, direction, endpoint, identity, &p))
            return npm_drop(endpoint, direction, skb);
    }
    npm_ct_create(endpoint, direction, &p);
    return TC_ACT_OK;
}

SEC("tc")
int npm_from_pod(struct __sk_buff *skb)
{
    return npm_verdict(skb, NPM_EGRESS);
}

SEC("tc")
int npm_to_pod(struct __sk_buff *skb)
{
    return npm_verdict(skb, NPM_INGRESS);
}

char LICENSE[] SEC("license") = "GPL";
