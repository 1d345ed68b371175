package io.npmagent.bpf.libbpf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.bpf.testing.BpfFs;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Map operations on tc_pod.o's real maps and on small maps made for one test. Every batch test runs
 * twice: through the kernel's batch commands and through the per-element fallback, which must agree.
 */
class BpfMapKernelTest {
    @RegisterExtension
    final BpfFs fs = new BpfFs();
    BpfObject object;

    @BeforeEach
    void load() {
        object = TcPod.load(fs.root());
    }

    @AfterEach
    void unload() {
        object.close();
    }

    private static final int EP = 7;
    private static final int PEER = 300;

    @Test
    void theLpmTrieAnswersByLongestPrefix() {
        try (BpfMap policy = object.map("npm_policy")) {
            byte[] anyProtocol = TcPod.policyKey(96, 0, TcPod.NPM_EGRESS, EP, PEER, 0, 0);
            byte[] tcp80 = TcPod.policyKey(128, 0, TcPod.NPM_EGRESS, EP, PEER, 6, 80);
            policy.update(anyProtocol, TcPod.rules(1));

            // A /96 entry stops before the protocol: a full key with any protocol and port falls in it.
            assertThat(policy.lookup(tcp80)).isEqualTo(TcPod.rules(1));
            assertThat(policy.lookup(TcPod.policyKey(128, 0, TcPod.NPM_EGRESS, EP, PEER, 17, 53))).isEqualTo(TcPod.rules(1));
            assertThat(policy.lookup(TcPod.policyKey(128, 0, TcPod.NPM_EGRESS, EP, PEER + 1, 6, 80))).isNull();
            assertThat(policy.lookup(TcPod.policyKey(128, 0, TcPod.NPM_INGRESS, EP, PEER, 6, 80))).isNull();

            // A longer prefix wins where it matches.
            policy.update(tcp80, TcPod.rules(2));
            assertThat(policy.lookup(tcp80)).isEqualTo(TcPod.rules(2));
            assertThat(policy.lookup(TcPod.policyKey(128, 0, TcPod.NPM_EGRESS, EP, PEER, 6, 81))).isEqualTo(TcPod.rules(1));

            List<String> keys = new ArrayList<>();
            for (byte[] k = policy.nextKey(null); k != null; k = policy.nextKey(k)) {
                keys.add(HexFormat.of().formatHex(k));
            }
            assertThat(keys).containsExactlyInAnyOrder(hex(anyProtocol), hex(tcp80));
            assertThat(policy.entries()).extracting(e -> hex(e[0]) + "=" + hex(e[1]))
                    .containsExactlyInAnyOrder(hex(anyProtocol) + "=" + hex(TcPod.rules(1)), hex(tcp80) + "=" + hex(TcPod.rules(2)));

            assertThat(policy.delete(anyProtocol)).isTrue();
            assertThat(policy.delete(anyProtocol)).isFalse();
            assertThat(policy.lookup(TcPod.policyKey(128, 0, TcPod.NPM_EGRESS, EP, PEER, 6, 81))).isNull();
            assertThat(policy.lookup(tcp80)).isEqualTo(TcPod.rules(2));
        }
    }

    @Test
    void perCpuValuesHaveOneSlotPerPossibleCpu() {
        try (BpfMap drops = object.map("npm_drops")) {
            int cpus = BpfMap.possibleCpus();
            assertThat(cpus).isPositive();
            assertThat(drops.perCpu()).isTrue();
            assertThat(drops.valueSize()).isEqualTo(16);
            assertThat(drops.valueBytes()).isEqualTo(cpus * 16);

            byte[] value = new byte[drops.valueBytes()];
            for (int cpu = 0; cpu < cpus; cpu++) {
                value[cpu * 16] = (byte) (cpu + 1); // packets on that CPU
            }
            byte[] key = TcPod.dropKey(EP, TcPod.NPM_EGRESS);
            drops.update(key, value);
            assertThat(drops.lookup(key)).isEqualTo(value);
            assertThatThrownBy(() -> drops.update(key, new byte[16]))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("possible CPUs");
        }
    }

    @ParameterizedTest(name = "kernel batches: {0}")
    @ValueSource(booleans = {true, false})
    void batchesOnAHashMap(boolean batches) {
        try (BpfMap endpoints = object.map("npm_endpoints")) {
            if (!batches) {
                endpoints.disableBatches();
            }
            List<byte[]> keys = IntStream.range(1, 101).mapToObj(i -> TcPod.endpointKey(i, 0)).toList();
            List<byte[]> values = IntStream.range(1, 101).mapToObj(i -> TcPod.endpoint(i, true, false)).toList();
            assertThat(endpoints.updateBatch(keys, values)).isEqualTo(100);
            assertThat(endpoints.entries()).hasSize(100);
            assertThat(endpoints.lookup(TcPod.endpointKey(42, 0))).isEqualTo(TcPod.endpoint(42, true, false));

            // Updating again replaces (BPF_ANY).
            assertThat(endpoints.updateBatch(keys.subList(0, 10), values.subList(10, 20))).isEqualTo(10);
            assertThat(endpoints.lookup(TcPod.endpointKey(1, 0))).isEqualTo(TcPod.endpoint(11, true, false));

            // Missing keys, alone and in a row, are skipped and not counted.
            List<byte[]> delete = new ArrayList<>(keys);
            delete.add(0, TcPod.endpointKey(1000, 0));
            delete.add(50, TcPod.endpointKey(1001, 0));
            delete.add(51, TcPod.endpointKey(1002, 0));
            delete.add(TcPod.endpointKey(1003, 0));
            assertThat(endpoints.deleteBatch(delete)).isEqualTo(100);
            assertThat(endpoints.entries()).isEmpty();
            assertThat(endpoints.deleteBatch(keys)).isZero();
        }
    }

    @ParameterizedTest(name = "kernel batches: {0}")
    @ValueSource(booleans = {true, false})
    void batchesOnTheLpmTrieAcrossChunks(boolean batches) {
        try (BpfMap policy = object.map("npm_policy")) {
            if (!batches) {
                policy.disableBatches();
            }
            int n = 2 * BpfMap.BATCH_CHUNK + 100;
            List<byte[]> keys = IntStream.range(0, n).mapToObj(i -> TcPod.policyKey(128, 0, TcPod.NPM_INGRESS, EP, PEER, 6, i)).toList();
            List<byte[]> values = IntStream.range(0, n).mapToObj(TcPod::rules).toList();
            assertThat(policy.updateBatch(keys, values)).isEqualTo(n);
            assertThat(policy.lookup(keys.get(n - 1))).isEqualTo(TcPod.rules(n - 1));
            assertThat(policy.entries()).hasSize(n);
            assertThat(policy.deleteBatch(keys)).isEqualTo(n);
            assertThat(policy.nextKey(null)).isNull();
        }
    }

    @ParameterizedTest(name = "kernel batches: {0}")
    @ValueSource(booleans = {true, false})
    void aFullHashMapStopsTheBatchAtTheFirstElementThatDoesNotFit(boolean batches) {
        // Room for one chunk and a bit: the failure falls inside the second chunk.
        int room = BpfMap.BATCH_CHUNK + 10;
        try (BpfMap small = BpfMap.create(BpfMap.TYPE_HASH, "npm_t_full", 4, 4, room, 0)) {
            if (!batches) {
                small.disableBatches();
            }
            List<byte[]> keys = IntStream.range(0, room + 5).mapToObj(TcPod::u32).toList();
            assertThatThrownBy(() -> small.updateBatch(keys, keys)).isInstanceOfSatisfying(BpfBatchException.class, e -> {
                assertThat(e.operation()).isEqualTo(batches ? "bpf_map_update_batch" : "bpf_map_update_elem");
                assertThat(e.errno()).isEqualTo(Errno.E2BIG);
                assertThat(e.applied()).isEqualTo(room);
                assertThat(e.total()).isEqualTo(room + 5);
                assertThat(e.failedKey()).isEqualTo(TcPod.u32(room));
                assertThat(e.getMessage()).contains("npm_t_full").contains("E2BIG").contains(hex(TcPod.u32(room)));
            });
            // Everything before the failure landed, nothing after it.
            assertThat(small.entries()).hasSize(room);
            assertThat(small.lookup(TcPod.u32(room - 1))).isEqualTo(TcPod.u32(room - 1));
            assertThat(small.lookup(TcPod.u32(room + 1))).isNull();
            // Replacing existing elements of a full map still works.
            assertThat(small.updateBatch(keys.subList(0, 3), keys.subList(3, 6))).isEqualTo(3);
        }
    }

    @ParameterizedTest(name = "kernel batches: {0}")
    @ValueSource(booleans = {true, false})
    void aFullTrieStopsTheBatchToo(boolean batches) {
        try (BpfMap trie = BpfMap.create(BpfMap.TYPE_LPM_TRIE, "npm_t_trie", 8, 4, 2, BpfMap.F_NO_PREALLOC)) {
            if (!batches) {
                trie.disableBatches();
            }
            List<byte[]> keys = IntStream.range(0, 4).mapToObj(i -> new byte[] {32, 0, 0, 0, 10, 0, 0, (byte) i}).toList();
            List<byte[]> values = IntStream.range(0, 4).mapToObj(TcPod::u32).toList();
            assertThatThrownBy(() -> trie.updateBatch(keys, values)).isInstanceOfSatisfying(BpfBatchException.class, e -> {
                assertThat(e.errno()).isEqualTo(Errno.ENOSPC);
                assertThat(e.applied()).isEqualTo(2);
                assertThat(e.failedKey()).isEqualTo(keys.get(2));
            });
            assertThat(trie.entries()).extracting(e -> hex(e[0])).containsExactlyInAnyOrder(hex(keys.get(0)), hex(keys.get(1)));
        }
    }

    @Test
    void theKernelSaysOncePerMapWhichBatchesItHas() {
        try (BpfMap endpoints = object.map("npm_endpoints");
                BpfMap policy = object.map("npm_policy");
                BpfMap state = object.map("npm_state")) {
            // This kernel (6.18) batches hash maps and LPM tries alike; arrays update in batches but
            // refuse delete batches (ENOTSUPP), as arrays refuse every delete.
            assertThat(endpoints.updateBatches()).isTrue();
            assertThat(endpoints.deleteBatches()).isTrue();
            assertThat(policy.updateBatches()).isTrue();
            assertThat(state.updateBatches()).isTrue();
            assertThat(state.deleteBatches()).isFalse();
        }
    }

    @Test
    void anArrayRefusesDeletesThroughTheFallbackWithTheFirstKey() {
        try (BpfMap state = object.map("npm_state")) {
            assertThatThrownBy(() -> state.deleteBatch(List.of(TcPod.u32(0))))
                    .isInstanceOfSatisfying(BpfBatchException.class, e -> {
                        assertThat(e.operation()).isEqualTo("bpf_map_delete_elem");
                        assertThat(e.errno()).isEqualTo(Errno.EINVAL);
                        assertThat(e.applied()).isZero();
                    });
            // An index past the end stops an update batch after the elements before it.
            List<byte[]> keys = List.of(TcPod.u32(0), TcPod.u32(5), TcPod.u32(0));
            assertThatThrownBy(() -> state.updateBatch(keys, List.of(TcPod.u32(1), TcPod.u32(1), TcPod.u32(0))))
                    .isInstanceOfSatisfying(BpfBatchException.class, e -> {
                        assertThat(e.applied()).isEqualTo(1);
                        assertThat(e.errno()).isEqualTo(Errno.E2BIG);
                    });
            assertThat(state.lookup(TcPod.u32(0))).isEqualTo(TcPod.u32(1));
        }
    }

    @Test
    void aClosedHandleFailsWithEbadfNamingTheOperation() {
        BpfMap policy = object.map("npm_policy");
        policy.close();
        policy.close();
        assertThat(policy.fd()).isEqualTo(-1);
        assertThatThrownBy(() -> policy.lookup(TcPod.policyKey(128, 0, 0, 1, 1, 6, 80)))
                .isInstanceOfSatisfying(BpfException.class, e -> {
                    assertThat(e.operation()).isEqualTo("bpf_map_lookup_elem");
                    assertThat(e.object()).isEqualTo("npm_policy");
                    assertThat(e.errno()).isEqualTo(Errno.EBADF);
                    assertThat(e.errorText()).isEqualTo("Bad file descriptor");
                    assertThat(e).hasMessage("bpf_map_lookup_elem npm_policy: Bad file descriptor (EBADF)");
                });
        assertThatThrownBy(() -> policy.updateBatch(List.of(new byte[20]), List.of(new byte[4])))
                .isInstanceOfSatisfying(BpfException.class, e -> assertThat(e.errno()).isEqualTo(Errno.EBADF));
    }

    @Test
    void aMissingPinFailsWithEnoentNamingThePath() {
        Path missing = fs.root().resolve("npm_nope");
        assertThatThrownBy(() -> BpfMap.openPinned(missing)).isInstanceOfSatisfying(BpfException.class, e -> {
            assertThat(e.operation()).isEqualTo("bpf_obj_get");
            assertThat(e.object()).isEqualTo(missing.toString());
            assertThat(e.errno()).isEqualTo(Errno.ENOENT);
            assertThat(e.getMessage()).contains("No such file or directory");
        });
    }

    @Test
    void aPinnedProgramIsNotAMap() {
        Path pin = fs.root().resolve("prog");
        try (BpfProgram program = object.program(TcPod.FROM_POD)) {
            program.pin(pin);
            assertThatThrownBy(() -> BpfMap.openPinned(pin)).isInstanceOf(BpfException.class).hasMessageContaining("not bpf-map");
            try (BpfProgram again = BpfProgram.openPinned(pin)) {
                assertThat(again.id()).isEqualTo(program.id());
                assertThat(again.type()).isEqualTo(BpfProgram.TYPE_SCHED_CLS);
            }
            assertThat(program.unpin()).isTrue();
            assertThat(program.unpin()).isFalse();
            assertThat(pin).doesNotExist();
        }
    }

    @Test
    void wrongSizesAreRefusedBeforeAnythingReachesTheKernel() {
        try (BpfMap endpoints = object.map("npm_endpoints")) {
            assertThatThrownBy(() -> endpoints.lookup(new byte[7])).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("8");
            assertThatThrownBy(() -> endpoints.updateBatch(List.of(new byte[8], new byte[8]), List.of(new byte[8], new byte[9])))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> endpoints.updateBatch(List.of(new byte[8]), List.of()))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(endpoints.entries()).isEmpty();
        }
    }

    private static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }
}
