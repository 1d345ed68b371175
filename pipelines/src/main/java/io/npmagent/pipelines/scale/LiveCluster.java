package io.npmagent.pipelines.scale;

import io.npmagent.pipelines.bench.BenchApiServer;
import io.npmagent.harness.controlplane.NetworkPolicyApi;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One scenario's cluster in a real control plane, made once and shared by every run of that scenario
 * (each backend, queue mode and repeat): at 100,000 pods making it takes ten minutes, an agent's run
 * two. What the runs change stays changed, so the counters that name the next edit and the next churn
 * pod carry on from run to run: an edit always moves a policy to a version it does not have (an update
 * to the same content makes no event) and a churn pod's name is never reused.
 */
public final class LiveCluster implements AutoCloseable {
    final ScaleScenario scenario;
    public final BenchApiServer api;
    /** The addresses of this node's pods (they need interfaces on each run's node). */
    public final List<String> localPods;
    final AgentScaleResult.ClusterCost creation;
    /** Policy edits made so far, in every run. */
    final AtomicInteger edits;
    /** Churn pods created so far, in every run; the newest 100 exist. */
    final AtomicInteger churned;
    private final Path dir;

    private LiveCluster(ScaleScenario scenario, BenchApiServer api, List<String> localPods, AgentScaleResult.ClusterCost creation, Path dir,
            AtomicInteger edits, AtomicInteger churned) {
        this.scenario = scenario;
        this.api = api;
        this.localPods = localPods;
        this.creation = creation;
        this.dir = dir;
        this.edits = edits;
        this.churned = churned;
    }

    /**
     * The same cluster with {@code n} ClusterNetworkPolicies added (their CRD installed first, as published): the
     * runs on it measure the tiers beside the NetworkPolicy-only runs before. The counters carry on.
     */
    LiveCluster withClusterPolicies(int n) throws IOException {
        NetworkPolicyApi.install(api.controlPlane().admin(), NetworkPolicyApi.Channel.STANDARD);
        for (int i = 0; i < n; i++) {
            api.create(ScaleCluster.clusterPolicy(i, scenario));
        }
        api.flush();
        return new LiveCluster(scenario.withClusterPolicies(n), api, localPods, creation, dir, edits, churned);
    }

    public static LiveCluster create(ScaleScenario s) throws IOException {
        Path dir = Files.createTempDirectory("npm-scale-");
        BenchApiServer api = BenchApiServer.start(dir.resolve("cluster"));
        try {
            long t0 = System.nanoTime();
            List<String> local = ScaleCluster.preload(api, s);
            var cost = new AgentScaleResult.ClusterCost((System.nanoTime() - t0) / 1e9, api.created(), api.rss("kube-apiserver"), api.rss("etcd"));
            return new LiveCluster(s, api, local, cost, dir, new AtomicInteger(), new AtomicInteger());
        } catch (RuntimeException e) {
            api.close();
            throw e;
        }
    }

    /**
     * Before a run: the probe policy admits the client (the last run may have left it closed) and, for
     * npm640, its 640 policies are gone: the run creates them and times how long the agent takes.
     */
    void reset() {
        api.admin().resource(ScaleCluster.probePolicy(true)).update();
        if (scenario.npm640()) {
            api.admin().network().v1().networkPolicies().inNamespace(ScaleCluster.NPM640_NAMESPACE).delete();
        }
    }

    @Override
    public void close() throws IOException {
        try {
            api.close();
        } finally {
            try (var files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
