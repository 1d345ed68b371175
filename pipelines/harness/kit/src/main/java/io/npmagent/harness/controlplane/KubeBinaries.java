package io.npmagent.harness.controlplane;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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

    /**
     * A binary {@code pipelines/kube-binaries} builds only when asked ({@code flanneld}, {@code e2e.test},
     * {@code prometheus}): from {@code $NPM_AGENT_KUBE_BIN} when it is there, else built by the script on request
     * (which links it into that directory when it is the script's).
     */
    public static Path onRequest(String name) throws IOException {
        String env = System.getenv("NPM_AGENT_KUBE_BIN");
        Path dir = env != null && !env.isBlank() && Files.isExecutable(Path.of(env, name)) ? Path.of(env) : build(name);
        if (!Files.isExecutable(dir.resolve(name))) {
            throw new IOException(dir.resolve(name) + " is missing: pipelines/kube-binaries " + name + " builds it");
        }
        return dir.resolve(name);
    }

    private static Path build(String... binaries) throws IOException {
        Path script;
        try {
            script = Checkout.root().resolve("pipelines/kube-binaries");
        } catch (IOException e) {
            throw new IOException(e.getMessage() + ": set NPM_AGENT_KUBE_BIN to a directory with " + String.join(", ", CONTROL_PLANE), e);
        }
        List<String> argv = new ArrayList<>(List.of(script.toString()));
        argv.addAll(List.of(binaries));
        Process p = new ProcessBuilder(argv)
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
}
