package io.npmagent.harness.controlplane;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The checkout the harness runs from: the first directory above its jar or classes, else above the
 * working directory (a module's tests, with the jar from the local Maven repository), that holds
 * {@code pipelines/kube-binaries}. The harness reads what the project ships from there (the RBAC, the
 * manifests) rather than from the agent's jar, which holds only the agent.
 */
public final class Checkout {
    private static Path found;

    private Checkout() {}

    public static synchronized Path root() throws IOException {
        if (found != null) {
            return found;
        }
        Path at;
        try {
            at = Path.of(Checkout.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toAbsolutePath();
        } catch (URISyntaxException e) {
            throw new IOException(e);
        }
        for (Path start : List.of(at, Path.of("").toAbsolutePath())) {
            for (Path p = start; p != null; p = p.getParent()) {
                if (Files.isExecutable(p.resolve("pipelines/kube-binaries"))) {
                    found = p;
                    return p;
                }
            }
        }
        throw new IOException("no checkout (a directory with pipelines/kube-binaries) above " + at + " or the working directory");
    }

    /** A file of the checkout, by its path from the top ({@code npm-agent/deploy/rbac.yaml}). */
    public static Path file(String relative) throws IOException {
        Path p = root().resolve(relative);
        if (!Files.exists(p)) {
            throw new IOException(p + " is missing from the checkout");
        }
        return p;
    }
}
