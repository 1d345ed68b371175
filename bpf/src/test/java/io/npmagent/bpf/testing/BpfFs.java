package io.npmagent.bpf.testing;

import io.npmagent.iptables.kernel.KernelTestSupport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A private bpffs for one test, mounted in a temporary directory (never /sys/fs/bpf): pins made there
 * vanish with the unmount, so no test leaves state behind or sees another's.
 */
public final class BpfFs implements AutoCloseable {
    private final Path root;

    private BpfFs(Path root) {
        this.root = root;
    }

    /** Mounts a bpffs at {@code parent}/bpffs; requires root, mount and umount (fails in CI, skips elsewhere). */
    public static BpfFs mount(Path parent) {
        KernelTestSupport.require("mount", "umount");
        Path root = parent.resolve("bpffs");
        try {
            Files.createDirectories(root);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        KernelTestSupport.must(List.of("mount", "-t", "bpf", "bpf", root.toString()));
        return new BpfFs(root);
    }

    public Path root() {
        return root;
    }

    @Override
    public void close() {
        KernelTestSupport.must(List.of("umount", root.toString()));
    }
}
