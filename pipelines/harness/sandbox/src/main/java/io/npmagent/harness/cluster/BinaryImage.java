package io.npmagent.harness.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * An OCI image of one static binary (pause, CoreDNS, agnhost) made with umoci, with no registry and no
 * engine, reproducibly (epoch timestamps, sorted tar); cached by the binary's hash in the upstream cache.
 * An image whose upstream twin has a distribution under its binary (agnhost: Alpine with a shell, curl,
 * nc, ip, iperf and dig, which e2e specs exec) gets Debian's equivalents as its first layer, from
 * mmdebstrap, as the agent's own image is made ({@code npm-agent/image/build}).
 */
final class BinaryImage {
    private static final String EPOCH = "1970-01-01T00:00:00Z";
    private static final String SUITE = "bookworm";
    /** A tar build of a Debian base downloads its packages: minutes on a cold mirror. */
    private static final Duration BASE_TIMEOUT = Duration.ofMinutes(15);

    private BinaryImage() {}

    /**
     * The archive of {@code binary} at the path {@code entrypoint} runs (its first word: {@code /pause},
     * {@code /bin/prometheus}) tagged {@code tag}; built unless cached.
     */
    static Path archive(Cluster c, Path binary, String tag, List<String> entrypoint) throws IOException {
        return archive(c, binary, tag, entrypoint, List.of());
    }

    /**
     * The same over a base layer of Debian {@value #SUITE} (mmdebstrap's essential variant, merged /usr) with
     * {@code packages}; none: the binary alone.
     */
    static Path archive(Cluster c, Path binary, String tag, List<String> entrypoint, List<String> packages) throws IOException {
        String name = binary.getFileName().toString();
        String key = sha256(binary).substring(0, 12) + (packages.isEmpty() ? "" : "-" + SUITE + "-" + sha256(String.join(",", packages)).substring(0, 8));
        Path out = c.config().imageCache().resolve(name + "-" + tag + "-" + key + ".oci.tar");
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
            if (!packages.isEmpty()) {
                Path base = work.resolve("base.tar");
                log("images: Debian " + SUITE + " with " + String.join(" ", packages) + " under /" + name + " (mmdebstrap, once)");
                // No resolv.conf or hostname of the host's: the runtime mounts its own. No /dev: the runtime's too.
                c.must(BASE_TIMEOUT, List.of("mmdebstrap", "--mode=root", "--variant=essential", "--format=tar",
                        "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr", "--include=" + String.join(",", packages),
                        "--customize-hook=rm -f \"$1/etc/resolv.conf\" \"$1/etc/hostname\"", "--skip=output/dev", SUITE, base.toString(), mirror(c)));
                c.must("umoci", "raw", "add-layer", "--image", image, "--history.created", EPOCH, base.toString());
            }
            c.must("umoci", "insert", "--image", image, "--history.created", EPOCH, rootfs.resolve(name).toString(), entrypoint.get(0));
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

    /** The Debian mirror this machine's apt uses for the suite, else Debian's own (as npm-agent/image/build picks it). */
    private static String mirror(Cluster c) {
        return c.run(List.of("apt-cache", "policy")).stdout().lines().map(String::strip).map(l -> l.split("\\s+"))
                .filter(f -> f.length >= 3 && f[2].equals(SUITE + "/main")).map(f -> f[1]).findFirst().orElse("http://deb.debian.org/debian");
    }

    private static void log(String message) {
        System.err.println("cluster: " + message);
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
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
