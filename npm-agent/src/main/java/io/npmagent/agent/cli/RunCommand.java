package io.npmagent.agent.cli;

import io.npmagent.agent.backend.Backends;
import io.npmagent.agent.config.AgentConfig;
import io.npmagent.agent.config.ConfigWatcher;
import io.npmagent.agent.config.LogLevels;
import io.npmagent.agent.http.AgentHttp;
import io.npmagent.agent.run.Agent;
import io.npmagent.agent.run.ManifestLoop;
import io.npmagent.agent.source.manifest.ManifestDirectory;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.metrics.Metrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.UnaryOperator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code npm-agent run}: the agent with a manifest directory as its source instead of an API server.
 * It watches the directory and applies every change through the same path informer events take;
 * with {@code --state-dir} it reports convergence ({@code status.json}: the generation it has seen and
 * the one in the kernel) and its metrics ({@code metrics.prom}). Runs until SIGTERM or SIGINT.
 */
@Command(name = "run", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Run the agent against a manifest directory, watching it for changes.")
final class RunCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--manifests", required = true, paramLabel = "DIR", description = "The manifest directory to watch.")
    Path manifests;

    @Mixin
    BackendOptions options;

    @Mixin
    BandwidthOptions bandwidth;

    @Option(names = "--node", paramLabel = "NAME", description = "Enforce for this node's pods only (default: every pod).")
    String node;

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

    @Override
    public Integer call() throws IOException {
        if (!Files.isDirectory(manifests)) {
            spec.commandLine().getErr().println("npm-agent run: --manifests " + manifests + " is not a directory");
            return ExitCodes.USAGE;
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
        Backends.Chosen backend;
        try {
            backend = Backends.choose(given("--backend") ? options.backend : config.backend(),
                    Backends.Placement.of(options.netns, given("--bpffs") ? options.bpffs : config.bpffs()),
                    given("--edt-horizon", "--ecn-threshold", "--ingress-burst", "--bbr") ? bandwidth.settings() : config.bandwidth(), metrics);
        } catch (IllegalArgumentException | IllegalStateException e) {
            spec.commandLine().getErr().println("npm-agent run: " + e.getMessage());
            return ExitCodes.USAGE;
        }
        QueueConfig queue = foreground ? QueueConfig.FOREGROUND : config.queue();
        Agent agent = new Agent(backend, node, queue, registry, metrics, config.reconcilePeriod());
        if (configFile != null) {
            follow(new ConfigWatcher(configFile, config, c -> {
                agent.reconfigure(foreground ? QueueConfig.FOREGROUND : c.queue());
                LogLevels.apply(c.logLevel());
            }));
        }
        ManifestLoop loop = new ManifestLoop(new ManifestDirectory(manifests), agent, stateDir, UnaryOperator.identity(), s -> {});
        AgentHttp http = null;
        if (configFile != null) {
            try {
                http = AgentHttp.start(new InetSocketAddress(config.listeningAddress(), config.listeningPort()),
                        new InetSocketAddress(config.debugListeningAddress(), config.debugListeningPort()), agent, loop::latest);
            } catch (IOException e) {
                spec.commandLine().getErr().println("npm-agent run: cannot listen on " + config.listeningAddress() + ":" + config.listeningPort()
                        + " or " + config.debugListeningAddress() + ":" + config.debugListeningPort() + ": " + e.getMessage());
                agent.close();
                return ExitCodes.USAGE;
            }
        }
        loop.stopOnShutdown();
        try {
            loop.run(Duration.ofMillis(pollMs));
        } finally {
            if (http != null) {
                http.close();
            }
        }
        return ExitCodes.OK;
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
