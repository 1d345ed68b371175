package io.npmagent.bpf.libbpf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.bpf.testing.BpfFs;
import io.npmagent.bpf.testing.Frames;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Loading tc_pod.o, pinning its maps by name, and adopting them again as a restarted agent does. */
class BpfObjectKernelTest {
    private static final List<String> PINNED = List.of("npm_state", "npm_endpoints", "npm_ipcache", "npm_policy", "npm_ct", "npm_drops",
            "npm_bw_config", "npm_rate_state", "npm_bw_stats", "npm_forward_hooks", "npm_deferred", "npm_local", "npm_tcp_stats",
            "npm_verdict_config", "npm_verdict_flows", "npm_verdict_events", "npm_verdict_budget", "npm_verdict_lost");

    @RegisterExtension
    final BpfFs fs = new BpfFs();

    @Test
    void loadPinsEveryMapByNameUnderThePinRoot() throws IOException {
        try (BpfObject object = TcPod.load(fs.root())) {
            assertThat(object.programNames()).contains(TcPod.FROM_POD, TcPod.TO_POD);
            assertThat(object.mapNames()).containsAll(PINNED);
            assertThat(pins()).containsExactlyInAnyOrderElementsOf(PINNED);
            try (BpfMap policy = object.map("npm_policy")) {
                assertThat(policy.type()).isEqualTo(BpfMap.TYPE_LPM_TRIE);
                assertThat(policy.keySize()).isEqualTo(20);
                assertThat(policy.valueSize()).isEqualTo(4);
                assertThat(policy.maxEntries()).isEqualTo(1048576);
                assertThat(policy.flags() & BpfMap.F_NO_PREALLOC).isEqualTo(BpfMap.F_NO_PREALLOC);
            }
        }
    }

    /**
     * What is pinned in the private bpffs. A kernel with BPF_PRELOAD puts maps.debug and progs.debug in
     * every fresh bpffs; they are the kernel's, not ours.
     */
    private List<String> pins() throws IOException {
        try (Stream<Path> files = Files.list(fs.root())) {
            return files.map(p -> p.getFileName().toString()).filter(n -> !n.endsWith(".debug")).toList();
        }
    }

    @Test
    void aSecondOpenReusesThePinnedMapsWithTheirContents() {
        byte[] key = TcPod.policyKey(96, 0, TcPod.NPM_EGRESS, 7, 300, 0, 0);
        int policyId;
        int stateId;
        try (BpfObject first = TcPod.load(fs.root());
                BpfMap policy = first.map("npm_policy");
                BpfMap state = first.map("npm_state")) {
            policy.update(key, TcPod.rules(3));
            state.update(TcPod.u32(0), TcPod.u32(1));
            policyId = policy.id();
            stateId = state.id();
        }
        // Nothing holds the maps now but their pins, as after the agent exited.
        try (BpfObject second = TcPod.load(fs.root());
                BpfMap policy = second.map("npm_policy");
                BpfMap state = second.map("npm_state");
                BpfMap pinned = BpfMap.openPinned(fs.root().resolve("npm_policy"))) {
            assertThat(policy.id()).isEqualTo(policyId);
            assertThat(state.id()).isEqualTo(stateId);
            assertThat(pinned.id()).isEqualTo(policyId);
            assertThat(policy.lookup(key)).isEqualTo(TcPod.rules(3));
            assertThat(state.lookup(TcPod.u32(0))).isEqualTo(TcPod.u32(1));
            assertThat(pinned.name()).isEqualTo("npm_policy");
        }
    }

    @Test
    void withoutAPinRootNothingIsPinnedAndEveryLoadGetsFreshMaps() throws IOException {
        try (BpfObject pinned = TcPod.load(fs.root());
                BpfMap pinnedState = pinned.map("npm_state");
                BpfObject a = TcPod.load(null);
                BpfMap aState = a.map("npm_state");
                BpfObject b = TcPod.load(null);
                BpfMap bState = b.map("npm_state")) {
            aState.update(TcPod.u32(0), TcPod.u32(1));
            assertThat(bState.lookup(TcPod.u32(0))).isEqualTo(TcPod.u32(0));
            assertThat(pinnedState.lookup(TcPod.u32(0))).isEqualTo(TcPod.u32(0));
            assertThat(List.of(aState.id(), bState.id())).doesNotContain(pinnedState.id()).doesNotHaveDuplicates();
            assertThat(pins()).containsExactlyInAnyOrderElementsOf(PINNED);
        }
    }

    @Test
    void handlesOutliveTheirObject() {
        byte[] key = TcPod.endpointKey(5, 0);
        BpfMap endpoints;
        BpfProgram program;
        try (BpfObject object = TcPod.load(null)) {
            endpoints = object.map("npm_endpoints");
            program = object.program(TcPod.FROM_POD);
        }
        try (endpoints; program) {
            endpoints.update(key, TcPod.endpoint(1, false, false));
            assertThat(endpoints.lookup(key)).isEqualTo(TcPod.endpoint(1, false, false));
            assertThat(program.testRun(Frames.tcp("10.99.0.1", 40000, "10.99.0.2", 80), null, 1).retval()).isEqualTo(TcPod.PASS);
        }
    }

    @Test
    void aPinRootOffBpffsIsRefusedNamingThePath() {
        assertThatThrownBy(() -> BpfObject.open(TcPod.ELF, "tc_pod", fs.root().getParent()))
                .isInstanceOf(BpfException.class)
                .hasMessageContaining(fs.root().getParent().toString())
                .hasMessageContaining("bpffs");
    }

    @Test
    void unknownNamesListWhatTheObjectHas() {
        try (BpfObject object = TcPod.load(null)) {
            assertThatThrownBy(() -> object.map("npm_nope"))
                    .isInstanceOf(BpfException.class)
                    .hasMessageContaining("npm_nope")
                    .hasMessageContaining("npm_policy");
            assertThatThrownBy(() -> object.program("npm_nope"))
                    .isInstanceOf(BpfException.class)
                    .hasMessageContaining(TcPod.FROM_POD);
        }
    }

    @Test
    void mapsAreOnlyHandedOutAfterLoad() {
        try (BpfObject object = BpfObject.open(TcPod.ELF, "tc_pod", null)) {
            assertThatThrownBy(() -> object.map("npm_policy")).isInstanceOf(IllegalStateException.class).hasMessageContaining("load");
        }
    }

    @Test
    void aProgramTheVerifierRefusesFailsToLoadWithTheVerifiersWords() {
        byte[] elf = Clang.bpfObject(Clang.resource("rejected.c", fs.root().getParent()));
        try (BpfObject object = BpfObject.open(elf, "rejected", fs.root())) {
            assertThatThrownBy(object::load).isInstanceOfSatisfying(BpfException.class, e -> {
                assertThat(e.operation()).isEqualTo("bpf_object__load");
                assertThat(e.object()).isEqualTo("rejected");
                assertThat(e.errno()).isEqualTo(Errno.EACCES);
                // The verifier's own complaint, from the log buffer the object gave libbpf.
                assertThat(e.getMessage()).contains("kernel log").contains("map_value_or_null");
            });
            assertThatThrownBy(() -> object.program("npm_rejected")).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void aCorruptObjectFailsToOpenWithLibbpfsReason() {
        assertThatThrownBy(() -> BpfObject.open(new byte[] {1, 2, 3, 4}, "junk", null))
                .isInstanceOfSatisfying(BpfException.class, e -> {
                    assertThat(e.operation()).isEqualTo("bpf_object__open_mem");
                    assertThat(e.object()).isEqualTo("junk");
                    assertThat(e.errno()).isPositive();
                    assertThat(e.errorText()).isNotBlank();
                });
    }
}
