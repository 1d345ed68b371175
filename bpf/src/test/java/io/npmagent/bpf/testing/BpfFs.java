package io.npmagent.bpf.testing;

import io.npmagent.dataplane.kernel.KernelTestSupport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A private bpffs, mounted in a temporary directory (never /sys/fs/bpf): pins made there vanish with
 * the unmount, so no test leaves state behind or sees another's. As a field with
 * {@code @RegisterExtension}, it is mounted before each test and unmounted after, in a temporary directory
 * ({@code root().getParent()}, which is no bpffs) removed with it; {@link #mount} mounts one for longer.
 */
public final class BpfFs implements AutoCloseable, BeforeEachCallback, AfterEachCallback {
    private Path root;

    /** For {@code @RegisterExtension}: a fresh bpffs for each test. */
    public BpfFs() {}

    /** Mounts a bpffs at {@code parent}/bpffs; requires root, mount and umount (fails in CI, skips elsewhere). */
    public static BpfFs mount(Path parent) {
        BpfFs fs = new BpfFs();
        fs.mountAt(parent.resolve("bpffs"));
        return fs;
    }

    private void mountAt(Path at) {
        KernelTestSupport.require("mount", "umount");
        try {
            Files.createDirectories(at);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        KernelTestSupport.must(List.of("mount", "-t", "bpf", "bpf", at.toString()));
        root = at;
    }

    public Path root() {
        return root;
    }

    @Override
    public void beforeEach(ExtensionContext context) throws IOException {
        mountAt(Files.createTempDirectory("npm-bpffs").resolve("bpffs"));
    }

    @Override
    public void afterEach(ExtensionContext context) throws IOException {
        if (root != null) {
            close();
            try (Stream<Path> files = Files.walk(root.getParent())) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    @Override
    public void close() {
        KernelTestSupport.must(List.of("umount", root.toString()));
    }
}
