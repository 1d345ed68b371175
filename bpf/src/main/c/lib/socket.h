/* Which local pod a socket is, for the sock_ops program at the pods' cgroup (congestion.h): by its
 * local address, as npm_local has it, before the socket has sent anything. One attachment at the
 * cgroup root serves every pod, whatever its cgroup. An address is what a socket claims, so what is
 * found here only ever steers the socket's own connection (its congestion control); what a pod is
 * charged is decided by the interface its packets leave by (bandwidth.h, backpressure.h). */
#ifndef NPM_SOCKET_H
#define NPM_SOCKET_H

#include "common.h"
#include "state.h"
#include "endpoint.h"
#include "forward.h"

#define NPM_AF_INET 2
#define NPM_AF_INET6 10

/* The local pod's endpoint of a socket with this family and local address, or NULL. An IPv4
 * connection on a dual-stack socket shows as ::ffff:a.b.c.d and is looked up as IPv4. */
static __always_inline struct npm_endpoint *npm_socket_endpoint(__u32 af, __u32 ip4, const __u32 ip6[4], __u8 version)
{
    __u8 addr[16] = {};
    __u8 family;
    if (af == NPM_AF_INET) {
        __builtin_memcpy(addr, &ip4, 4);
        family = NPM_FAMILY_V4;
    } else if (af == NPM_AF_INET6) {
        if (ip6[0] == 0 && ip6[1] == 0 && ip6[2] == bpf_htonl(0xffff)) {
            __builtin_memcpy(addr, &ip6[3], 4);
            family = NPM_FAMILY_V4;
        } else {
            __builtin_memcpy(addr, ip6, 16);
            family = NPM_FAMILY_V6;
        }
    } else {
        return NULL;
    }
    struct npm_endpoint_key ek = { .ifindex = npm_local_interface(version, family, addr), .version = version };
    return ek.ifindex ? bpf_map_lookup_elem(&npm_endpoints, &ek) : NULL;
}

#endif
