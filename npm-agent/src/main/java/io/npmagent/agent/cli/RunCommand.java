package io.npmagent.agent.cli;

import io.npmagent.agent.backend.Backends;
import io.npmagent.agent.backend.PredecessorCleanup;
import io.npmagent.agent.config.AgentConfig;
import io.npmagent.agent.config.ConfigWatcher;
import io.npmagent.agent.config.LogLevels;
import io.npmagent.agent.flows.DeniedFlowEvents;
import io.npmagent.agent.http.AgentHttp;
import io.npmagent.agent.run.Agent;
import io.npmagent.agent.run.AgentStatus;
import io.npmagent.agent.run.KubeLoop;
import io.npmagent.agent.run.ManifestLoop;
import io.npmagent.agent.run.ModelLoop;
import io.npmagent.agent.source.k8s.KubeClients;
import io.npmagent.agent.source.k8s.KubeSource;
import io.npmagent.agent.source.k8s.ProblemEvents;
import io.npmagent.agent.source.manifest.ManifestDirectory;
import io.kubernetes.client.openapi.ApiClient;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.metrics.Metrics;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code npm-agent run}: the agent. Its source is the API server (informers; in-cluster credentials, or
 * {@code --kubeconfig}), or with {@code --manifests} a directory it watches, whose changes take the same
 * path informer events take. With {@code --state-dir} it reports convergence ({@code status.json}: the
 * generation it has seen and the one in the kernel) and its metrics ({@code metrics.prom}). Runs until
 * SIGTERM or SIGINT.
 */
@Command(name = "run", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Run the agent: against the API server (the default), or against a manifest directory it watches.")
final class RunCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--manifests", paramLabel = "DIR", description = "Watch this manifest directory instead of the API server.")
    Path manifests;

    @Option(names = "--kubeconfig", paramLabel = "FILE", description = "Reach the API server with this kubeconfig "
            + "(default: the pod's service account in a cluster, else $KUBECONFIG or ~/.kube/config).")
    Path kubeconfig;

    @Mixin
    BackendOptions options;

    @Mixin
    BandwidthOptions bandwidth;

    @Option(names = "--node", paramLabel = "NAME", defaultValue = "${env:NODE_NAME}",
            description = "Enforce for this node's pods only (default: $NODE_NAME; with --manifests and no NODE_NAME, every pod). "
                    + "Required with the API server.")
    String node;

    @Option(names = "--pod-relay", paramLabel = "URL", description = "Read other nodes' pods from this pod relay (npm-agent relay), "
            + "this node's own from the API server (default: every pod from the API server).")
    String podRelay;

    @Option(names = "--pod-relay-ca", paramLabel = "FILE", description = "The CA that signed the pod relay's certificate (default: the API server's).")
    Path podRelayCa;

    @Option(names = "--state-dir", paramLabel = "DIR", description = "Write status.json and metrics.prom here.")
    Path stateDir;

    @Option(names = "--foreground", description = "NetPolInBackground off: apply each change as its own transaction.")
    boolean foreground;

    @Option(names = "--config", paramLabel = "FILE",
            description = "The configuration file (JSON or YAML, NPM's keys and ours), followed while the agent runs; "
                    + "flags given on the command line win over it. With it the agent serves /metrics, /healthz and /readyz "
                    + "on ListeningAddress:ListeningPort and /debug/state on DebugListeningAddress:DebugListeningPort.")
    Path configFile;

    @Option(names = "--poll-ms", defaultValue = "200", paramLabel = "MS", description = "How often to look at the directory (default: ${DEFAULT-VALUE}).")
    long pollMs;

    /** Flows.Events, once the API server is there to post to; the configuration's reload flips it. */
    private volatile DeniedFlowEvents flowEvents;

    @Override
    public Integer call() throws IOException {
        if (manifests != null && !Files.isDirectory(manifests)) {
            return usage("--manifests " + manifests + " is not a directory");
        }
        if (manifests == null && (node == null || node.isBlank())) {
            return usage("with the API server as the source, the node name is required: --node NAME or NODE_NAME "
                    + "(in a DaemonSet, from the downward API: spec.nodeName)");
        }
        if (stateDir != null) {
            Files.createDirectories(stateDir);
        }
        AgentConfig config = AgentConfig.DEFAULTS;
        if (configFile != null) {
            try {
                config = ConfigWatcher.load(configFile);
            } catch (AgentConfig.Rejected e) {
                e.problems().forEach(p -> spec.commandLine().getErr().println("npm-agent run: --config " + configFile + ": " + p));
                return ExitCodes.USAGE;
            }
            LogLevels.apply(config.logLevel());
        }
        PrometheusRegistry registry = new PrometheusRegistry();
        Metrics metrics = new Metrics(registry);
        JvmMetrics.builder().register(registry);
        Backends.Chosen backend;
        String backendName = given("--backend") ? options.backend : config.backend();
        try {
            backend = Backends.choose(backendName, placement(config),
                    given("--edt-horizon", "--ecn-threshold", "--ingress-burst", "--bbr", "--edt-flow-control", "--big-tcp") ? bandwidth.settings() : config.bandwidth(), metrics);
        } catch (IllegalArgumentException | IllegalStateException e) {
            return usage(e.getMessage());
        }
        if (!backendName.equals("auto")) { // auto logs its choice, and why, itself
            System.getLogger(RunCommand.class.getName()).log(System.Logger.Level.INFO, "backend {0}", backend.reason());
        }
        QueueConfig queue = foreground ? QueueConfig.FOREGROUND : config.queue();
        Agent agent = new Agent(backend, node, queue, registry, metrics, config.reconcilePeriod(), config.flows());
        if (configFile != null) {
            follow(new ConfigWatcher(configFile, config, c -> {
                agent.reconfigure(foreground ? QueueConfig.FOREGROUND : c.queue());
                LogLevels.apply(c.logLevel());
                agent.flows().reconfigure(c.flows().settings());
                DeniedFlowEvents events = flowEvents;
                if (events != null) {
                    events.enable(c.flows().events());
                }
            }));
        }
        return manifests != null ? runOnManifests(agent, config) : runOnApiServer(agent, config);
    }

    private int runOnManifests(Agent agent, AgentConfig config) {
        ManifestLoop loop = new ManifestLoop(new ManifestDirectory(manifests), agent, stateDir, UnaryOperator.identity(), s -> {});
        return runUntilStopped(loop, agent, configFile == null ? null : () -> serve(config, agent, loop::latest, Map::of));
    }

    /** Informers, nothing applied before their caches sync; the HTTP endpoints always (probes need them). */
    private int runOnApiServer(Agent agent, AgentConfig config) throws IOException {
        ApiClient client = KubeClients.connect(kubeconfig);
        KubeSource.PodRelay relay = null;
        if (podRelay != null) {
            // The relay's own client, on the same credentials: the relay asks the API server who they are.
            ApiClient relayClient = KubeClients.connect(kubeconfig).setBasePath(podRelay);
            if (podRelayCa != null) {
                try (java.io.InputStream ca = java.nio.file.Files.newInputStream(podRelayCa)) {
                    relayClient.setSslCaCert(ca);
                }
            }
            relay = new KubeSource.PodRelay(KubeClients.forWatches(relayClient), node); // setSslCaCert made a new HTTP client
        }
        KubeSource source = new KubeSource(client, config.resyncPeriod(), KubeSource.DISCOVERY_PERIOD, relay);
        KubeLoop loop = new KubeLoop(source, agent, stateDir);
        try (ProblemEvents events = new ProblemEvents(client, node)) {
            flowEvents = new DeniedFlowEvents(events::postOnPod, java.time.InstantSource.system(), 10, config.flows().events(), agent.registry());
            flowEvents.followWhileEnabled(agent.flows());
            loop.afterEachStep(() -> events.report(agent.objectErrors()));
            loop.afterEachStep(() -> events.reportRefusals(agent.refusedObjects()));
            loop.afterEachStep(new PredecessorCleanup(agent.backendName(), placement(config), agent::converged));
            return runUntilStopped(loop, agent, () -> serve(config, agent, loop::latest, source::counts));
        }
    }

    /** Serves HTTP if asked ({@code http} non-null), runs the loop until SIGTERM or SIGINT, then stops serving. */
    private int runUntilStopped(ModelLoop loop, Agent agent, Supplier<AgentHttp> http) {
        AgentHttp serving = http == null ? null : http.get();
        if (http != null && serving == null) {
            agent.close();
            return ExitCodes.USAGE;
        }
        loop.stopOnShutdown(Duration.ofSeconds(20));
        try {
            loop.run(Duration.ofMillis(pollMs));
        } finally {
            if (serving != null) {
                serving.close();
            }
        }
        return ExitCodes.OK;
    }

    private AgentHttp serve(AgentConfig config, Agent agent, Supplier<AgentStatus> status, Supplier<Map<String, Integer>> objects) {
        try {
            return AgentHttp.start(new InetSocketAddress(config.listeningAddress(), config.listeningPort()),
                    new InetSocketAddress(config.debugListeningAddress(), config.debugListeningPort()), agent, status, objects);
        } catch (IOException e) {
            usage("cannot listen on " + config.listeningAddress() + ":" + config.listeningPort()
                    + " or " + config.debugListeningAddress() + ":" + config.debugListeningPort() + ": " + e.getMessage());
            return null;
        }
    }

    /** Where the backends work: the namespace and bpffs given, else the configuration's bpffs. */
    private Backends.Placement placement(AgentConfig config) {
        return Backends.Placement.of(options.netns, given("--bpffs") ? options.bpffs : config.bpffs(),
                given("--cgroup-root") ? options.cgroupRoot : config.cgroupRoot());
    }

    private int usage(String message) {
        spec.commandLine().getErr().println("npm-agent run: " + message);
        return ExitCodes.USAGE;
    }

    /** Whether any of {@code names} was given on the command line (a default does not count). */
    private boolean given(String... names) {
        for (String n : names) {
            if (spec.commandLine().getParseResult().hasMatchedOption(n)) {
                return true;
            }
        }
        return false;
    }

    /** Looks at the configuration file every two seconds, on a thread of its own, for as long as the agent runs. */
    private static void follow(ConfigWatcher watcher) {
        Thread t = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    Thread.sleep(2000);
                    watcher.poll();
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    System.getLogger(RunCommand.class.getName()).log(System.Logger.Level.ERROR, "config reload failed", e);
                }
            }
        }, "npm-agent-config");
        t.setDaemon(true);
        t.start();
    }
}
