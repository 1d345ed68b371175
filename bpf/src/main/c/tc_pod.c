/* The programs on each local pod's host-side interface, the netfilter forward hook, and at the pods'
 * cgroup the sock_ops program that gives pods' connections their congestion control (congestion.h) and pace (pacing.h)
 * and the egress program that tells their TCP to slow down before the rate limit drops (backpressure.h). A packet's verdict
 * is decided in npm_verdict(): replies and established flows pass, and so do ICMP errors about them
 * (ct.h); otherwise, if the direction is judged for the pod (endpoint.h: NetworkPolicy isolates it or a
 * ClusterNetworkPolicy selects it), npm_judge() (policy.h) decides on the peer's class, atom and ANY
 * (peers.h): the pod's Admin tier table, its NetworkPolicy entries where they isolate it, its Baseline
 * table, in the copy of the state packets read now (state.h); what they deny is dropped and counted (drop.h)
 * and, with what decided it, reported as a flow verdict (verdicts.h), as is what they allow where
 * enabled. The node itself is admitted unless a
 * ClusterNetworkPolicy egress rule holding its address denies it (NetworkPolicy never cuts a pod from its
 * node); a pod reaching itself through its Service is a peer like any other. Egress to an address that is no pod
 * is judged in npm_forward() instead, after kube-proxy's DNAT; new connections through a Service to a
 * pod are judged there too, on their source before kube-proxy's SNAT (forward.h). What policy passes
 * then meets the pod's rate limit for the direction (bandwidth.h). Anything that is not IPv4 or IPv6,
 * IPv6 neighbour discovery, and packets on an interface that is no local pod's pass untouched. */
#include "lib/common.h"
#include "lib/state.h"
#include "lib/endpoint.h"
#include "lib/peers.h"
#include "lib/policy.h"
#include "lib/ct.h"
#include "lib/drop.h"
#include "lib/verdicts.h"
#include "lib/bandwidth.h"
#include "lib/forward.h"
#include "lib/congestion.h"
#include "lib/backpressure.h"
#include "lib/pacing.h"

/* A destination tc cannot judge: it may be a Service address that DNAT turns into a backend's (an
 * address that is no pod: WORLD, or an atom's own number as its class). */
static __always_inline int npm_after_dnat(__u32 identity)
{
    return identity == NPM_IDENTITY_WORLD || (identity >= NPM_IDENTITY_ATOM_BASE && identity != NPM_IDENTITY_ANY);
}

/* *endpoint is set when the packet is a local pod's. */
static __always_inline int npm_verdict(struct __sk_buff *skb, __u8 direction, struct npm_endpoint **endpoint_out)
{
    struct npm_packet p = {};
    struct npm_packet inner = {};
    if (npm_parse(skb, &p, &inner) < 0 || p.kind == NPM_LINK_CONTROL)
        return NPM_PASS;
    __u8 version = npm_version();
    struct npm_endpoint_key ek = { .ifindex = skb->ifindex, .version = version };
    struct npm_endpoint *ep = bpf_map_lookup_elem(&npm_endpoints, &ek);
    if (!ep)
        return NPM_PASS;
    *endpoint_out = ep;
    __u32 endpoint = ep->id;
    if (npm_ct_known(endpoint, direction, &p))
        return NPM_PASS;
    /* The carried packet went the other way through this endpoint. */
    if (p.kind == NPM_ICMP_ERROR && npm_ct_known(endpoint, direction ^ 1, &inner))
        return NPM_PASS;
    if (ep->judged[direction & 1]) {
        const __u8 *peer = direction == NPM_EGRESS ? p.daddr : p.saddr;
        struct npm_peer id = npm_identity(version, p.family, peer);
        if (direction == NPM_EGRESS && npm_after_dnat(id.identity) && npm_forward_hook(p.family)) {
            npm_defer(skb, &p); /* judged by npm_forward(), which remembers what it admits */
            return NPM_PASS;
        }
        __u32 j = npm_judge(version, direction, ep, id.identity, id.atom, &p);
        if ((j & NPM_VERDICT_MASK) != NPM_VERDICT_ALLOW) {
            npm_verdict_report(endpoint, direction, NPM_FLOW_DENIED, NPM_REASON_POLICY, j >> NPM_REF_SHIFT, NPM_REPORTER_TC, &p, NULL,
                               skb->len);
            return npm_drop(endpoint, direction, skb);
        }
        npm_verdict_report(endpoint, direction, NPM_FLOW_ALLOWED, 0, j >> NPM_REF_SHIFT, NPM_REPORTER_TC, &p, NULL, skb->len);
    }
    npm_ct_create(endpoint, direction, &p);
    return NPM_PASS;
}

/* Policy first: a packet policy drops uses no bandwidth. */
static __always_inline int npm_handle(struct __sk_buff *skb, __u8 direction)
{
    struct npm_endpoint *ep = NULL;
    int verdict = npm_verdict(skb, direction, &ep);
    if (verdict != NPM_PASS || !ep)
        return verdict;
    return npm_shape(skb, ep->id, direction, ep->rate[direction & 1]);
}

SEC("tc")
int npm_from_pod(struct __sk_buff *skb)
{
    return npm_handle(skb, NPM_EGRESS);
}

SEC("tc")
int npm_to_pod(struct __sk_buff *skb)
{
    return npm_handle(skb, NPM_INGRESS);
}

/* Egress of a packet tc deferred (NPM_MARK_DEFERRED), from the local pod that sent it, judged on
 * the destination kube-proxy chose; what it admits is remembered under the tuple the pod sent. */
static __always_inline int npm_forward_egress(struct bpf_nf_ctx *ctx, __u8 version, const struct npm_packet *now,
                                              const struct npm_packet *sent)
{
    struct net_device *in = ctx->state->in;
    /* The sender by tc's record; else by the interface it came in from (pods on point-to-point
     * interfaces). Neither: tc deferred it, yet no local pod is known to have sent it (its record
     * evicted, or the pod gone since): dropped, never judged open; a retransmission is deferred anew. */
    __u32 from = npm_deferred_from(sent);
    struct npm_endpoint_key ek = { .ifindex = from ? from : (in ? in->ifindex : 0), .version = version };
    struct npm_endpoint *ep = bpf_map_lookup_elem(&npm_endpoints, &ek);
    const struct npm_packet *service = npm_translated(sent, now) ? sent : NULL;
    __u32 len = ctx->skb->len;
    if (!ep) {
        npm_verdict_report(0, NPM_EGRESS, NPM_FLOW_DENIED, NPM_REASON_NO_CONNECTION_STATE, 0, NPM_REPORTER_NETFILTER, now, service, len);
        return NPM_NF_DROP;
    }
    if (ep->judged[NPM_EGRESS]) {
        struct npm_peer peer = npm_identity(version, now->family, now->daddr);
        __u32 j = npm_judge(version, NPM_EGRESS, ep, peer.identity, peer.atom, now);
        if ((j & NPM_VERDICT_MASK) != NPM_VERDICT_ALLOW) {
            npm_verdict_report(ep->id, NPM_EGRESS, NPM_FLOW_DENIED, NPM_REASON_POLICY, j >> NPM_REF_SHIFT, NPM_REPORTER_NETFILTER, now,
                               service, len);
            npm_count_drop(ep->id, NPM_EGRESS, len);
            return NPM_NF_DROP;
        }
        npm_verdict_report(ep->id, NPM_EGRESS, NPM_FLOW_ALLOWED, 0, j >> NPM_REF_SHIFT, NPM_REPORTER_NETFILTER, now, service, len);
    }
    npm_ct_create(ep->id, NPM_EGRESS, sent);
    return NPM_NF_ACCEPT;
}

/* Ingress of a new connection going out to a local pod, if DNAT translated it, judged on its source
 * before SNAT (forward.h says why). The rest of the connection, and whatever DNAT did not touch, is
 * tc's alone. */
static __always_inline int npm_forward_ingress(struct bpf_nf_ctx *ctx, __u8 version, const struct npm_packet *now,
                                               const struct npm_packet *sent)
{
    struct net_device *out = ctx->state->out;
    /* The pod it goes out to: by its interface, or where that is a bridge, by its address. */
    struct npm_endpoint_key ek = { .ifindex = out->ifindex, .version = version };
    struct npm_endpoint *ep = bpf_map_lookup_elem(&npm_endpoints, &ek);
    if (!ep) {
        ek.ifindex = npm_local_interface(version, now->family, now->daddr);
        ep = ek.ifindex ? bpf_map_lookup_elem(&npm_endpoints, &ek) : NULL;
    }
    if (!ep || !ep->judged[NPM_INGRESS] || !npm_translated(sent, now))
        return NPM_NF_ACCEPT;
    struct npm_peer peer = npm_identity(version, now->family, now->saddr);
    __u32 j = npm_judge(version, NPM_INGRESS, ep, peer.identity, peer.atom, now);
    __u32 len = ctx->skb->len;
    if ((j & NPM_VERDICT_MASK) != NPM_VERDICT_ALLOW) {
        npm_verdict_report(ep->id, NPM_INGRESS, NPM_FLOW_DENIED, NPM_REASON_POLICY, j >> NPM_REF_SHIFT, NPM_REPORTER_NETFILTER, now, sent,
                           len);
        npm_count_drop(ep->id, NPM_INGRESS, len);
        return NPM_NF_DROP;
    }
    npm_verdict_report(ep->id, NPM_INGRESS, NPM_FLOW_ALLOWED, 0, j >> NPM_REF_SHIFT, NPM_REPORTER_NETFILTER, now, sent, len);
    return NPM_NF_ACCEPT;
}

/* At the netfilter forward and local-in hooks (IPv4 and IPv6), after DNAT and before SNAT: the
 * packets tc deferred, judged on the destination kube-proxy chose (at local in: the node, as at tc,
 * remembered for the replies); and new translated connections to an ingress-isolated local
 * pod, judged on their source as it was before SNAT. Everything else passes unread; what is read is
 * read once, for both. */
SEC("netfilter")
int npm_forward(struct bpf_nf_ctx *ctx)
{
    struct sk_buff *skb = ctx->skb;
    int deferred = skb->mark & NPM_MARK_DEFERRED;
    int fresh = ctx->state->out && (BPF_CORE_READ(skb, _nfct) & NPM_NFCT_INFOMASK) == NPM_IP_CT_NEW; /* local in: to the node */
    if (!deferred && !fresh)
        return NPM_NF_ACCEPT;
    __u8 version = npm_version();
    struct npm_packet now = {};
    if (npm_forward_parse(skb, ctx->state->pf == 2 /* NFPROTO_IPV4 */ ? NPM_FAMILY_V4 : NPM_FAMILY_V6, &now) < 0)
        return NPM_NF_DROP; /* unreadable: never judged open */
    struct npm_packet sent;
    npm_forward_original(skb, &now, &sent);
    if (deferred && npm_forward_egress(ctx, version, &now, &sent) == NPM_NF_DROP)
        return NPM_NF_DROP;
    return fresh ? npm_forward_ingress(ctx, version, &now, &sent) : NPM_NF_ACCEPT;
}

/* At the cgroup that holds the pods' processes: an active connection gets its pod's congestion control
 * as it sends its SYN, a passive one once established (congestion.h); both a pacing cap if their pod is
 * rate-limited, kept up to date at every RTT sample (pacing.h). Never refuses a connection. */
SEC("sockops")
int npm_sock_ops(struct bpf_sock_ops *skops)
{
    __u32 op = skops->op;
    if (op != BPF_SOCK_OPS_TCP_CONNECT_CB && op != BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB && op != BPF_SOCK_OPS_RTT_CB)
        return 1;
    __u32 ip6[4] = { skops->local_ip6[0], skops->local_ip6[1], skops->local_ip6[2], skops->local_ip6[3] };
    struct npm_endpoint *ep = npm_socket_endpoint(skops->family, skops->local_ip4, ip6, npm_version());
    if (op != BPF_SOCK_OPS_RTT_CB)
        npm_set_congestion(skops, ep);
    npm_pace(skops, ep);
    return 1;
}

/* At the cgroup that holds the pods' processes, each packet their sockets send: TCP told to slow down
 * as the pod's egress queue fills, held back past its horizon (backpressure.h). Never drops outright:
 * the rate itself is enforced at the pod's interface. */
SEC("cgroup_skb/egress")
int npm_pod_egress(struct __sk_buff *skb)
{
    return npm_back_pressure(skb);
}

char LICENSE[] SEC("license") = "GPL";
