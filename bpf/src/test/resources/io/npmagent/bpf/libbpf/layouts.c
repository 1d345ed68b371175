/* Prints, as "NAME VALUE" lines, every offset and size io.npmagent.bpf.libbpf.Layouts declares and the
 * constants the binding hard-codes, from the installed libbpf, kernel and libc headers. LayoutTest
 * compiles and runs it, and compares line by line: a name here must be a constant there and back. */
#define _GNU_SOURCE /* CLONE_NEWNET, F_DUPFD_CLOEXEC */
#include <stdio.h>
#include <stddef.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/statfs.h>
#include <linux/bpf.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define SIZE(name, type) printf("%s %zu\n", #name, sizeof(type))
#define OFF(name, type, field) printf("%s %zu\n", #name, offsetof(type, field))
#define VAL(name, value) printf("%s %lld\n", #name, (long long)(value))

int main(void)
{
    SIZE(OPEN_OPTS_SIZE, struct bpf_object_open_opts);
    OFF(OPEN_OPTS_OBJECT_NAME, struct bpf_object_open_opts, object_name);
    OFF(OPEN_OPTS_PIN_ROOT_PATH, struct bpf_object_open_opts, pin_root_path);
    OFF(OPEN_OPTS_KERNEL_LOG_BUF, struct bpf_object_open_opts, kernel_log_buf);
    OFF(OPEN_OPTS_KERNEL_LOG_SIZE, struct bpf_object_open_opts, kernel_log_size);

    SIZE(MAP_CREATE_OPTS_SIZE, struct bpf_map_create_opts);
    OFF(MAP_CREATE_OPTS_MAP_FLAGS, struct bpf_map_create_opts, map_flags);

    SIZE(BATCH_OPTS_SIZE, struct bpf_map_batch_opts);
    OFF(BATCH_OPTS_ELEM_FLAGS, struct bpf_map_batch_opts, elem_flags);
    OFF(BATCH_OPTS_FLAGS, struct bpf_map_batch_opts, flags);

    SIZE(TEST_RUN_OPTS_SIZE, struct bpf_test_run_opts);
    OFF(TEST_RUN_DATA_IN, struct bpf_test_run_opts, data_in);
    OFF(TEST_RUN_DATA_OUT, struct bpf_test_run_opts, data_out);
    OFF(TEST_RUN_DATA_SIZE_IN, struct bpf_test_run_opts, data_size_in);
    OFF(TEST_RUN_DATA_SIZE_OUT, struct bpf_test_run_opts, data_size_out);
    OFF(TEST_RUN_CTX_IN, struct bpf_test_run_opts, ctx_in);
    OFF(TEST_RUN_CTX_OUT, struct bpf_test_run_opts, ctx_out);
    OFF(TEST_RUN_CTX_SIZE_IN, struct bpf_test_run_opts, ctx_size_in);
    OFF(TEST_RUN_CTX_SIZE_OUT, struct bpf_test_run_opts, ctx_size_out);
    OFF(TEST_RUN_RETVAL, struct bpf_test_run_opts, retval);
    OFF(TEST_RUN_REPEAT, struct bpf_test_run_opts, repeat);
    OFF(TEST_RUN_DURATION, struct bpf_test_run_opts, duration);

    SIZE(TC_HOOK_SIZE, struct bpf_tc_hook);
    OFF(TC_HOOK_IFINDEX, struct bpf_tc_hook, ifindex);
    OFF(TC_HOOK_ATTACH_POINT, struct bpf_tc_hook, attach_point);
    OFF(TC_HOOK_PARENT, struct bpf_tc_hook, parent);

    SIZE(TC_OPTS_SIZE, struct bpf_tc_opts);
    OFF(TC_OPTS_PROG_FD, struct bpf_tc_opts, prog_fd);
    OFF(TC_OPTS_FLAGS, struct bpf_tc_opts, flags);
    OFF(TC_OPTS_PROG_ID, struct bpf_tc_opts, prog_id);
    OFF(TC_OPTS_HANDLE, struct bpf_tc_opts, handle);
    OFF(TC_OPTS_PRIORITY, struct bpf_tc_opts, priority);

    SIZE(MAP_INFO_SIZE, struct bpf_map_info);
    OFF(MAP_INFO_TYPE, struct bpf_map_info, type);
    OFF(MAP_INFO_ID, struct bpf_map_info, id);
    OFF(MAP_INFO_KEY_SIZE, struct bpf_map_info, key_size);
    OFF(MAP_INFO_VALUE_SIZE, struct bpf_map_info, value_size);
    OFF(MAP_INFO_MAX_ENTRIES, struct bpf_map_info, max_entries);
    OFF(MAP_INFO_MAP_FLAGS, struct bpf_map_info, map_flags);
    OFF(MAP_INFO_NAME, struct bpf_map_info, name);

    SIZE(PROG_INFO_SIZE, struct bpf_prog_info);
    OFF(PROG_INFO_TYPE, struct bpf_prog_info, type);
    OFF(PROG_INFO_ID, struct bpf_prog_info, id);
    OFF(PROG_INFO_NAME, struct bpf_prog_info, name);

    VAL(OBJ_NAME_LEN, BPF_OBJ_NAME_LEN);

    SIZE(STATFS_SIZE, struct statfs);
    OFF(STATFS_F_TYPE, struct statfs, f_type);

    SIZE(SK_BUFF_SIZE, struct __sk_buff);
    OFF(SK_BUFF_IFINDEX, struct __sk_buff, ifindex);
    OFF(SK_BUFF_TSTAMP, struct __sk_buff, tstamp);

    /* Constants hard-coded elsewhere in the binding. */
    VAL(BPF_MAP_TYPE_HASH, BPF_MAP_TYPE_HASH);
    VAL(BPF_MAP_TYPE_ARRAY, BPF_MAP_TYPE_ARRAY);
    VAL(BPF_MAP_TYPE_PERCPU_HASH, BPF_MAP_TYPE_PERCPU_HASH);
    VAL(BPF_MAP_TYPE_PERCPU_ARRAY, BPF_MAP_TYPE_PERCPU_ARRAY);
    VAL(BPF_MAP_TYPE_LRU_HASH, BPF_MAP_TYPE_LRU_HASH);
    VAL(BPF_MAP_TYPE_LRU_PERCPU_HASH, BPF_MAP_TYPE_LRU_PERCPU_HASH);
    VAL(BPF_MAP_TYPE_LPM_TRIE, BPF_MAP_TYPE_LPM_TRIE);
    VAL(BPF_F_NO_PREALLOC, BPF_F_NO_PREALLOC);
    VAL(BPF_PROG_TYPE_SCHED_CLS, BPF_PROG_TYPE_SCHED_CLS);
    VAL(BPF_FUNC_map_lookup_elem, BPF_FUNC_map_lookup_elem);
    VAL(BPF_FUNC_map_update_elem, BPF_FUNC_map_update_elem);
    VAL(BPF_FUNC_ktime_get_ns, BPF_FUNC_ktime_get_ns);
    VAL(BPF_TC_INGRESS, BPF_TC_INGRESS);
    VAL(BPF_TC_EGRESS, BPF_TC_EGRESS);
    VAL(BPF_TC_F_REPLACE, BPF_TC_F_REPLACE);
    VAL(O_CLOEXEC, O_CLOEXEC);
    VAL(F_DUPFD_CLOEXEC, F_DUPFD_CLOEXEC);
    VAL(CLONE_NEWNET, CLONE_NEWNET);
    VAL(BPF_FS_MAGIC, BPF_FS_MAGIC);
    return 0;
}
