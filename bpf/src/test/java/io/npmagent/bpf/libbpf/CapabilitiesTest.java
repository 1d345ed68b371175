package io.npmagent.bpf.libbpf;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The pure parts of the probe: version rules and the words of the report. */
class CapabilitiesTest {
    @Test
    void tcxNeedsLibbpf13AndKernel66() {
        assertThat(Capabilities.tcxReason(1, 1, "6.18.44-fc")).isEqualTo("libbpf 1.1 has no bpf_program__attach_tcx (needs 1.3)");
        assertThat(Capabilities.tcxReason(1, 3, "6.5.0")).isEqualTo("kernel 6.5.0 has no tcx (needs 6.6)");
        assertThat(Capabilities.tcxReason(1, 1, "5.15.0-91-generic")).contains("libbpf 1.1").contains("kernel 5.15.0-91-generic");
        assertThat(Capabilities.tcxReason(1, 4, "6.6.1")).isNull();
        assertThat(Capabilities.tcxReason(2, 0, "7.0")).isNull();
        assertThat(Capabilities.majorMinor("garbage")).containsExactly(0, 0);
    }

    @Test
    void withoutLibbpfOnlyLibbpfIsReportedMissing() {
        Capabilities none = new Capabilities(null, "not found", "6.1.0", false, false, false, false, false, false,
                false, false, false, false, false, false, "libbpf is not available", Path.of("/sys/fs/bpf"), false);
        assertThat(none.canEnforce()).isFalse();
        assertThat(none.missing()).containsExactly("libbpf (not found)");
        assertThat(none.describe()).startsWith("eBPF: libbpf missing, kernel 6.1.0; cannot enforce, missing: libbpf (not found)");
    }

    @Test
    void everyRequiredFeatureIsNamedWhenMissing() {
        Capabilities bare = new Capabilities("1.1", null, "4.9.0", false, false, false, false, false, false,
                false, false, false, false, false, false, "old", Path.of("/sys/fs/bpf"), false);
        assertThat(bare.missing()).containsExactly(
                "program type sched_cls", "map type hash", "map type array", "map type lpm_trie", "map type lru_hash",
                "map type percpu_hash", "helper bpf_map_lookup_elem for sched_cls", "helper bpf_map_update_elem for sched_cls",
                "helper bpf_ktime_get_ns for sched_cls",
                "program type netfilter (Linux 6.4), to judge egress after kube-proxy's DNAT", "bpffs mounted at /sys/fs/bpf");
        assertThat(bare.describe()).contains("batch map ops no (one syscall per element)");
    }
}
