package io.npmagent.harness.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import io.npmagent.harness.controlplane.GoModules;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The tags of the images built from upstream's binaries, as upstream tags them: pause's own version,
 * CoreDNS's, and agnhost's {@code test/images/agnhost/VERSION} in the Kubernetes module pinned by
 * {@code pipelines/upstream/kubernetes/go.mod}.
 */
public record UpstreamImages(String pauseTag, String corednsTag, String agnhostTag) {
    public static final String PAUSE = "registry.k8s.io/pause";
    public static final String COREDNS = "registry.k8s.io/coredns/coredns";
    public static final String AGNHOST = "registry.k8s.io/e2e-test-images/agnhost";

    static UpstreamImages read(Cluster c) {
        String pause = c.run(List.of("sh", "-c", "\"$0\" -v 2>&1", c.bin("pause").toString())).stdout();
        String coredns = c.must(c.bin("coredns").toString(), "-version").stdout();
        Path module = c.checkout().resolve("pipelines/upstream/kubernetes");
        String modcache = c.must("sh", "-c", "cd \"$0\" && go env GOMODCACHE", module.toString()).stdout().strip();
        try {
            String version = GoModules.required(Files.readString(module.resolve("go.mod")), "k8s.io/kubernetes");
            String agnhost = Files.readString(Path.of(modcache, "k8s.io", "kubernetes@" + version, "test/images/agnhost/VERSION")).strip();
            return new UpstreamImages(first(Pattern.compile("v([0-9.]+)"), pause, "pause -v"),
                    "v" + first(Pattern.compile("(?m)^CoreDNS-([0-9.]+)"), coredns, "coredns -version"), agnhost);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String first(Pattern p, CharSequence text, String what) {
        Matcher m = p.matcher(text);
        if (!m.find()) {
            throw new IllegalStateException("no version in " + what + ": " + text);
        }
        return m.group(1);
    }

    public String pause() {
        return PAUSE + ":" + pauseTag;
    }

    public String coredns() {
        return COREDNS + ":" + corednsTag;
    }

    public String agnhost() {
        return AGNHOST + ":" + agnhostTag;
    }
}
