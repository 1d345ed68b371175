package io.npmagent.harness.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * An OCI image of one static binary (pause, CoreDNS, agnhost) made with umoci, with no registry and no
 * engine, reproducibly (epoch timestamps, sorted tar); cached by the binary's hash in the upstream cache.
 */
final class BinaryImage {
    private static final String EPOCH = "1970-01-01T00:00:00Z";

    private BinaryImage() {}

    /** The archive of {@code binary} as {@code /NAME} tagged {@code tag}, running {@code entrypoint}; built unless cached. */
    static Path archive(Cluster c, Path binary, String tag, List<String> entrypoint) throws IOException {
        String name = binary.getFileName().toString();
        Path out = c.config().imageCache().resolve(name + "-" + tag + "-" + sha256(binary).substring(0, 12) + ".oci.tar");
        if (Files.exists(out)) {
            return out;
        }
        Files.createDirectories(out.getParent());
        Path work = Files.createTempDirectory("binary-image");
        try {
            Path rootfs = Files.createDirectories(work.resolve("rootfs"));
            Files.copy(binary, rootfs.resolve(name));
            Files.setPosixFilePermissions(rootfs.resolve(name), PosixFilePermissions.fromString("rwxr-xr-x"));
            String layout = work.resolve("layout").toString();
            String image = layout + ":" + tag;
            c.must("umoci", "init", "--layout", layout);
            c.must("umoci", "new", "--image", image);
            c.must("umoci", "insert", "--image", image, "--history.created", EPOCH, rootfs.resolve(name).toString(), "/" + name);
            List<String> config = new ArrayList<>(List.of("umoci", "config", "--image", image, "--created", EPOCH, "--history.created", EPOCH));
            for (String e : entrypoint) {
                config.addAll(List.of("--config.entrypoint", e));
            }
            c.must(config);
            c.must("umoci", "gc", "--layout", layout);
            Path tmp = Path.of(out + ".tmp");
            c.must("tar", "-C", layout, "--sort=name", "--mtime=@0", "--owner=0", "--group=0", "-cf", tmp.toString(), ".");
            Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return out;
        } finally {
            c.run(List.of("rm", "-rf", work.toString()));
        }
    }

    static String sha256(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                d.update(buf, 0, n);
            }
            return HexFormat.of().formatHex(d.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
