/* A program the verifier must refuse: it writes through a map value without checking it for NULL.
 * (A hash map: for an array and a constant key in range, recent verifiers know the value exists.)
 * BpfObjectKernelTest loads it to prove a refusal arrives as an exception carrying the verifier's words. */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} npm_counts SEC(".maps");

SEC("tc")
int npm_rejected(struct __sk_buff *skb)
{
    __u32 zero = 0;
    __u64 *count = bpf_map_lookup_elem(&npm_counts, &zero);
    *count += 1;
    return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
