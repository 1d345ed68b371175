/* Which of the two copies of the policy state packets read. The agent writes a batch into the copy
 * packets do not read, then flips this: every packet is judged by the whole state before a batch or
 * the whole state after it, never by half of one. The copy left behind is brought up to date when the
 * next batch writes it, or in idle time (VersionedMaps.java). */
#ifndef NPM_STATE_H
#define NPM_STATE_H

#include "common.h"

struct npm_state {
    __u32 version; /* 0 or 1: the copy packets read */
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct npm_state);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} npm_state SEC(".maps");

static __always_inline __u8 npm_version(void)
{
    __u32 zero = 0;
    struct npm_state *s = bpf_map_lookup_elem(&npm_state, &zero);
    return s ? (__u8)(s->version & 1) : 0;
}

#endif
