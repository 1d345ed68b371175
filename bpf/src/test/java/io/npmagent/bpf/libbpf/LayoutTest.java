package io.npmagent.bpf.libbpf;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every struct offset in {@link Layouts} and every C constant the binding hard-codes, against the
 * installed headers: layouts.c prints offsetof/sizeof/values, this compares them name by name. Offsets
 * must be equal. An opts struct's size may grow in newer headers (libbpf takes our older sz); a buffer
 * C fills (statfs) must be at least C's size.
 */
class LayoutTest {
    static Map<String, Long> c;

    @BeforeAll
    static void compileAndRun(@TempDir Path dir) {
        Path exe = Clang.executable(Clang.resource("layouts.c", dir));
        c = new TreeMap<>();
        for (String line : Clang.run(List.of(exe.toString())).stdout().strip().split("\n")) {
            String[] parts = line.split(" ");
            c.put(parts[0], Long.parseLong(parts[1]));
        }
    }

    @Test
    void everyLayoutConstantMatchesTheHeaders() throws IllegalAccessException {
        SoftAssertions soft = new SoftAssertions();
        int checked = 0;
        for (Field f : Layouts.class.getDeclaredFields()) {
            if (!Modifier.isStatic(f.getModifiers()) || f.getType() != int.class) {
                continue;
            }
            String name = f.getName();
            long ours = f.getInt(null);
            soft.assertThat(c).as("layouts.c prints %s", name).containsKey(name);
            Long theirs = c.get(name);
            if (theirs == null) {
                continue;
            }
            checked++;
            if (name.equals("STATFS_SIZE")) {
                soft.assertThat(ours).as(name + ": a buffer C fills").isGreaterThanOrEqualTo(theirs);
            } else if (name.endsWith("_SIZE") && !name.contains("_OPTS_KERNEL_LOG_")) {
                soft.assertThat(ours).as(name + ": the size we declare").isLessThanOrEqualTo(theirs);
            } else {
                soft.assertThat(ours).as(name).isEqualTo(theirs);
            }
        }
        soft.assertThat(checked).as("constants compared").isGreaterThan(40);
        soft.assertAll();
    }

    @Test
    void theSizesWeDeclareAreLibbpf11s() {
        // On the pinned libbpf 1.1 headers the sizes are exactly equal; on later ones the test above allows growth.
        if (c.get("TEST_RUN_OPTS_SIZE") == 80) {
            assertThat(c.get("OPEN_OPTS_SIZE")).isEqualTo(Layouts.OPEN_OPTS_SIZE);
            assertThat(c.get("TC_OPTS_SIZE")).isEqualTo(Layouts.TC_OPTS_SIZE);
            assertThat(c.get("TC_HOOK_SIZE")).isEqualTo(Layouts.TC_HOOK_SIZE);
            assertThat(c.get("BATCH_OPTS_SIZE")).isEqualTo(Layouts.BATCH_OPTS_SIZE);
            assertThat(c.get("MAP_CREATE_OPTS_SIZE")).isEqualTo(Layouts.MAP_CREATE_OPTS_SIZE);
        }
    }

    @Test
    void hardCodedConstantsMatchTheHeaders() {
        assertThat(c.get("BPF_MAP_TYPE_HASH")).isEqualTo(BpfMap.TYPE_HASH);
        assertThat(c.get("BPF_MAP_TYPE_ARRAY")).isEqualTo(BpfMap.TYPE_ARRAY);
        assertThat(c.get("BPF_MAP_TYPE_PERCPU_HASH")).isEqualTo(BpfMap.TYPE_PERCPU_HASH);
        assertThat(c.get("BPF_MAP_TYPE_PERCPU_ARRAY")).isEqualTo(BpfMap.TYPE_PERCPU_ARRAY);
        assertThat(c.get("BPF_MAP_TYPE_LRU_HASH")).isEqualTo(BpfMap.TYPE_LRU_HASH);
        assertThat(c.get("BPF_MAP_TYPE_LRU_PERCPU_HASH")).isEqualTo(BpfMap.TYPE_LRU_PERCPU_HASH);
        assertThat(c.get("BPF_MAP_TYPE_LPM_TRIE")).isEqualTo(BpfMap.TYPE_LPM_TRIE);
        assertThat(c.get("BPF_F_NO_PREALLOC")).isEqualTo(BpfMap.F_NO_PREALLOC);
        assertThat(c.get("BPF_PROG_TYPE_SCHED_CLS")).isEqualTo(BpfProgram.TYPE_SCHED_CLS);
        assertThat(c.get("BPF_FUNC_map_lookup_elem")).isEqualTo(Capabilities.HELPER_MAP_LOOKUP_ELEM);
        assertThat(c.get("BPF_FUNC_map_update_elem")).isEqualTo(Capabilities.HELPER_MAP_UPDATE_ELEM);
        assertThat(c.get("BPF_FUNC_ktime_get_ns")).isEqualTo(Capabilities.HELPER_KTIME_GET_NS);
        assertThat(c.get("BPF_TC_INGRESS")).isEqualTo(Tc.Hook.INGRESS.attachPoint);
        assertThat(c.get("BPF_TC_EGRESS")).isEqualTo(Tc.Hook.EGRESS.attachPoint);
        assertThat(c.get("BPF_TC_F_REPLACE")).isEqualTo(Tc.BPF_TC_F_REPLACE);
        assertThat(c.get("O_CLOEXEC")).isEqualTo(LibC.O_CLOEXEC);
        assertThat(c.get("F_DUPFD_CLOEXEC")).isEqualTo(LibC.F_DUPFD_CLOEXEC);
        assertThat(c.get("CLONE_NEWNET")).isEqualTo(LibC.CLONE_NEWNET);
        assertThat(c.get("BPF_FS_MAGIC")).isEqualTo(LibC.BPF_FS_MAGIC);
    }
}
