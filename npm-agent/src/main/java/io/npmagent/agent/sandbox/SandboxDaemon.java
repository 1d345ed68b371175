package io.npmagent.agent.sandbox;

import io.npmagent.agent.backend.Backends;
import io.npmagent.agent.run.Agent;
import io.npmagent.agent.run.ManifestLoop;
import io.npmagent.agent.source.manifest.ManifestDirectory;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.metrics.Metrics;
import io.npmagent.iptables.exec.ProcessRunner;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The process {@code sandbox up} leaves running: the agent, fed by the manifest directory exactly as
 * {@code npm-agent run --netns} is, with every kernel command in the node's network namespace, plus the
 * sandbox's stand-ins for a CNI (addresses for pods that have none, {@link AddressAssigner}) and a
 * container runtime (namespaces and servers, {@link PodPlumbing}), which act on each snapshot before
 * the agent sees it. Stops on SIGTERM.
 */
public final class SandboxDaemon {
    private SandboxDaemon() {}

    public static void run(Sandbox sandbox) throws IOException {
        Sandbox.Spec spec = sandbox.spec();
        PrometheusRegistry registry = new PrometheusRegistry();
        Metrics metrics = new Metrics(registry);
        Backends.Chosen backend = Backends.choose(spec.backend(), Backends.Placement.of(sandbox.nodeNetns(), sandbox.bpffs()),
                Sandbox.Shaping.settings(spec.shaping()), metrics);
        AddressAssigner addresses = new AddressAssigner();
        PodPlumbing pods = new PodPlumbing(sandbox, ProcessRunner.host());
        Agent agent = new Agent(backend, null, QueueConfig.DEFAULTS, registry, metrics, Duration.ofSeconds(10));
        ManifestLoop loop = new ManifestLoop(new ManifestDirectory(Path.of(spec.manifests())), agent, sandbox.dir(),
                addresses::assign, pods::reconcile);
        loop.stopOnShutdown(Duration.ofSeconds(20));
        loop.run(Duration.ofMillis(100));
    }
}
