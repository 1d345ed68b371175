package io.npmagent.agent.cluster;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Where the upstream binaries (etcd, kube-apiserver, kube-controller-manager, kube-proxy, kubectl) are:
 * {@code $NPM_AGENT_KUBE_BIN} when set, else the directory {@code pipelines/kube-binaries} of this
 * checkout prints, which builds them from their Go modules the first time (its progress goes to our
 * stderr) and answers from its cache afterwards.
 */
public final class KubeBinaries {
    public static final List<String> CONTROL_PLANE = List.of("etcd", "kube-apiserver", "kube-controller-manager", "kube-proxy", "kubectl");
    private static Path found;

    private KubeBinaries() {}

    public static synchronized Path dir() throws IOException {
        if (found != null) {
            return found;
        }
        String env = System.getenv("NPM_AGENT_KUBE_BIN");
        Path dir = env != null && !env.isBlank() ? Path.of(env) : build();
        for (String b : CONTROL_PLANE) {
            if (!Files.isExecutable(dir.resolve(b))) {
                throw new IOException(dir.resolve(b) + " is missing: pipelines/kube-binaries builds it"
                        + (env != null ? " (NPM_AGENT_KUBE_BIN=" + env + ")" : ""));
            }
        }
        found = dir;
        return dir;
    }

    public static Path binary(String name) throws IOException {
        return dir().resolve(name);
    }

    private static Path build() throws IOException {
        Path script = checkout().resolve("pipelines/kube-binaries");
        Process p = new ProcessBuilder(script.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        try {
            if (p.waitFor() != 0 || out.isEmpty()) {
                throw new IOException(script + " failed (exit " + p.exitValue() + "); its messages are above");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while building the upstream binaries", e);
        }
        return Path.of(out.lines().reduce((a, b) -> b).orElseThrow());
    }

    /**
     * The checkout this code runs from: the first directory above its jar or classes, else above the
     * working directory (a module's tests, with the jar from the local Maven repository), that holds
     * pipelines/kube-binaries.
     */
    private static Path checkout() throws IOException {
        Path at;
        try {
            at = Path.of(KubeBinaries.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toAbsolutePath();
        } catch (URISyntaxException e) {
            throw new IOException(e);
        }
        for (Path start : List.of(at, Path.of("").toAbsolutePath())) {
            for (Path p = start; p != null; p = p.getParent()) {
                if (Files.isExecutable(p.resolve("pipelines/kube-binaries"))) {
                    return p;
                }
            }
        }
        throw new IOException("no pipelines/kube-binaries above " + at + " or the working directory: set NPM_AGENT_KUBE_BIN to a directory with "
                + String.join(", ", CONTROL_PLANE));
    }
}
