package io.npmagent.bpf.libbpf;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Messages an operator reads: operation, object, libbpf's words, the errno's name. */
class BpfExceptionTest {
    @Test
    void theMessageNamesOperationObjectTextAndErrno() {
        BpfException e = LibBpfNative.error("bpf_map_update_elem", "npm_policy", Errno.E2BIG);
        assertThat(e).hasMessage("bpf_map_update_elem npm_policy: Argument list too long (E2BIG)");
        assertThat(e.operation()).isEqualTo("bpf_map_update_elem");
        assertThat(e.object()).isEqualTo("npm_policy");
        assertThat(e.errno()).isEqualTo(7);
        assertThat(e.errorText()).isEqualTo("Argument list too long");
    }

    @Test
    void libbpfsOwnCodesAndTheKernelsEnotsuppHaveWords() {
        // LIBBPF_ERRNO__VERIFY (4007): libbpf's own code, unknown to libc.
        assertThat(LibBpfNative.strerror(4007)).isEqualTo("Kernel verifier blocks program loading");
        assertThat(LibBpfNative.error("bpf_map_delete_batch", "npm_state", Errno.ENOTSUPP).getMessage())
                .isEqualTo("bpf_map_delete_batch npm_state: Operation not supported by this kernel for this object (ENOTSUPP)");
        assertThat(Errno.name(12345)).isEqualTo("errno 12345");
    }

    @Test
    void aBatchFailureSaysWhereItStoppedAndWhichKey() {
        BpfBatchException e = new BpfBatchException("bpf_map_update_batch", "npm_endpoints", Errno.E2BIG,
                "Argument list too long", 3, 5, new byte[] {1, 0, 0, 0});
        assertThat(e).hasMessage("bpf_map_update_batch npm_endpoints: Argument list too long (E2BIG) at element 3 of 5"
                + " (key 01000000); 3 applied before it");
        assertThat(e.applied()).isEqualTo(3);
        assertThat(e.total()).isEqualTo(5);
        byte[] key = e.failedKey();
        key[0] = 9;
        assertThat(e.failedKey()[0]).isEqualTo((byte) 1);
    }

    @Test
    void bothLibraryNamesLoad() {
        // The fallback name for hosts with only the runtime package (no libbpf.so symlink).
        LibBpfNative.Api api = jnr.ffi.LibraryLoader.create(LibBpfNative.Api.class).failImmediately().load("libbpf.so.1");
        assertThat(api.libbpf_major_version()).isEqualTo(LibBpfNative.lib().libbpf_major_version());
    }
}
