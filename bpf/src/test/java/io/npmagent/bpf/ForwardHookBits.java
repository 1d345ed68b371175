package io.npmagent.bpf;

import io.npmagent.bpf.libbpf.BpfMap;
import java.nio.file.Path;

/**
 * Sets which families tc may leave egress to the forward hook (npm_forward_hooks: 1 IPv4, 2 IPv6), for
 * tests of the tc programs on crafted packets: 0 is a kernel without netfilter programs, where tc judges
 * every packet itself.
 */
final class ForwardHookBits {
    private ForwardHookBits() {}

    static void set(Path pinDir, int bits) {
        try (BpfMap hooks = BpfMap.openPinned(pinDir.resolve(ForwardHooks.MAP))) {
            ForwardHooks.writeBits(hooks, bits);
        }
    }
}
