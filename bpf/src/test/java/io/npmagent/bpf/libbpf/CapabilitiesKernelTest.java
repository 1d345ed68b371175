package io.npmagent.bpf.libbpf;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.bpf.testing.BpfFs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The probe on this machine: a kernel that has everything tc_pod.o needs, with libbpf 1.1. */
class CapabilitiesKernelTest {
    @RegisterExtension
    final BpfFs fs = new BpfFs();

    @Test
    void thisHostCanEnforceWithAPrivateBpffs() {
        Capabilities caps = Capabilities.probe(fs.root());
        assertThat(caps.libbpfVersion()).matches("1\\.\\d+");
        assertThat(caps.kernelRelease()).isEqualTo(System.getProperty("os.version"));
        assertThat(caps.schedCls()).isTrue();
        assertThat(caps.hashMap()).isTrue();
        assertThat(caps.arrayMap()).isTrue();
        assertThat(caps.lpmTrie()).isTrue();
        assertThat(caps.lruHash()).isTrue();
        assertThat(caps.percpuHash()).isTrue();
        assertThat(caps.helperMapLookup()).isTrue();
        assertThat(caps.helperMapUpdate()).isTrue();
        assertThat(caps.helperKtimeGetNs()).isTrue();
        assertThat(caps.batchOps()).isTrue();
        assertThat(caps.bpffs()).isTrue();
        assertThat(caps.missing()).isEmpty();
        assertThat(caps.canEnforce()).isTrue();
        assertThat(caps.describe()).contains("can enforce").contains("libbpf " + caps.libbpfVersion());
    }

    @Test
    void tcxNeedsALibbpfThisHostDoesNotHave() {
        Capabilities caps = Capabilities.probe(fs.root());
        int minor = Integer.parseInt(caps.libbpfVersion().substring(2));
        if (minor < 3) { // the pinned libbpf is 1.1
            assertThat(caps.tcx()).isFalse();
            assertThat(caps.tcxReason()).contains("bpf_program__attach_tcx").contains("libbpf 1." + minor);
            assertThat(caps.describe()).contains("tcx no (").contains("tc clsact in use");
        } else {
            assertThat(caps.tcx()).isEqualTo(caps.tcxReason() == null);
        }
    }

    @Test
    void withoutBpffsAtThePinRootItCannotEnforceAndSaysWhy() {
        Capabilities caps = Capabilities.probe(fs.root().getParent());
        assertThat(caps.bpffs()).isFalse();
        assertThat(caps.canEnforce()).isFalse();
        assertThat(caps.missing()).containsExactly("bpffs mounted at " + fs.root().getParent());
        assertThat(caps.describe()).contains("cannot enforce, missing: bpffs mounted at " + fs.root().getParent());
        assertThat(Capabilities.bpffsAt(fs.root())).isTrue();
        assertThat(Capabilities.bpffsAt(fs.root().getParent().resolve("nope"))).isFalse();
    }
}
