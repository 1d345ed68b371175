package io.npmagent.pipelines.bandwidth;

import io.npmagent.harness.node.NetworkNamespace;
import io.npmagent.harness.sandbox.Sandbox;
import java.io.IOException;

/**
 * The CNI bandwidth plugin's egress shaping, on a sandbox pod: what the pod sends arrives at the
 * ingress of its host-side veth, is redirected to an ifb device, and leaves that through a TBF at the
 * pod's rate with 25 ms latency, the plugin's fixed value. The redirect is a u32 filter after the
 * agent's programs on the same clsact hook (the plugin uses an ingress qdisc, which cannot share the
 * hook with clsact; the effect is the same). Everything is in the sandbox's node namespace and goes
 * with it.
 */
final class TbfShaper {
    static final int LATENCY_MS = 25;

    private TbfShaper() {}

    /**
     * TBF bucket: a 64 KiB GSO packet or a millisecond at the rate, whichever is larger. A bigger bucket
     * admits bigger bursts; the queue, rate x 25 ms plus the bucket, is what requests wait behind.
     */
    static long burstBytes(long bitsPerSecond) {
        return Math.max(64 * 1024, bitsPerSecond / 8 / 1000);
    }

    static void apply(String sandbox, String pod, long bitsPerSecond) throws IOException {
        Sandbox s = Sandbox.named(sandbox);
        int index = s.pods().stream().filter(p -> p.pod().equals(pod)).mapToInt(Sandbox.PodRecord::index).findFirst()
                .orElseThrow(() -> new IOException("sandbox " + sandbox + " has no pod " + pod));
        String veth = "veth" + index;
        String ifb = "ifb" + index;
        NetworkNamespace node = NetworkNamespace.existing(s.node(0).netns());
        node.must("ip", "link", "add", ifb, "type", "ifb");
        node.must("ip", "link", "set", ifb, "up");
        node.must("tc", "qdisc", "add", "dev", ifb, "root", "tbf", "rate", bitsPerSecond + "bit", "burst",
                Long.toString(burstBytes(bitsPerSecond)), "latency", LATENCY_MS + "ms");
        node.must("tc", "filter", "add", "dev", veth, "ingress", "prio", "2", "u32", "match", "u32", "0", "0",
                "action", "mirred", "egress", "redirect", "dev", ifb);
    }

}
