package io.npmagent.harness.cluster;

import io.npmagent.harness.controlplane.KubeBinaries;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The agent installed as most operators install a node agent: the release {@code npm-agent} of the chart
 * {@code npm-agent/deploy/helm/npm-agent} in {@code kube-system}, by upstream's helm (pipelines/kube-binaries helm)
 * as the cluster's admin. Its default values render the plain manifests, image included, so the image
 * {@link Agent#loadImage} imports is the one the release runs.
 */
public final class HelmRelease {
    public static final String NAME = "npm-agent";
    private static final Duration ROLLOUT = Duration.ofSeconds(300);

    private HelmRelease() {}

    /** {@code helm install} with {@code sets} (KEY=VALUE, as {@code --set} takes them), then the DaemonSet Ready on every node. */
    public static void install(Cluster c, String... sets) throws Exception {
        Agent.loadImage(c);
        helm(c, "install", sets);
        awaitRollout(c);
    }

    /**
     * {@code helm upgrade --reuse-values} with {@code sets}; returns without waiting, so a caller can probe while a
     * change of a key that is not live rolls the DaemonSet ({@link #awaitRollout}).
     */
    public static void upgrade(Cluster c, String... sets) throws Exception {
        helm(c, "upgrade", sets);
    }

    public static void awaitRollout(Cluster c) {
        c.awaitKubectl(ROLLOUT, "the npm-agent DaemonSet rolled out", "-n", "kube-system", "rollout", "status", "daemonset/npm-agent", "--timeout=2s");
    }

    private static void helm(Cluster c, String verb, String... sets) throws Exception {
        List<String> argv = new ArrayList<>(List.of(KubeBinaries.onRequest("helm").toString(), verb, NAME,
                c.checkout().resolve("npm-agent/deploy/helm/npm-agent").toString(), "-n", "kube-system",
                "--kubeconfig", c.config().adminKubeconfig().toString()));
        if (verb.equals("upgrade")) {
            argv.add("--reuse-values");
        }
        for (String set : sets) {
            argv.addAll(List.of("--set", set));
        }
        c.must(argv);
        Cluster.log("helm " + verb + " " + NAME + (sets.length == 0 ? "" : " --set " + String.join(" --set ", sets)));
    }
}
