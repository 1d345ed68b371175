package io.npmagent.agent.cli;

import io.npmagent.agent.backend.Backends;
import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.backend.BackendException;
import io.npmagent.dataplane.backend.BackendStatus;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.desired.DesiredDelta;
import io.npmagent.dataplane.metrics.Metrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code npm-agent apply}: enforce a manifest directory once. The desired state goes to the backend as
 * one batch, which adopts what an earlier run left in the kernel and writes only the difference, so
 * running it again with the same manifests changes nothing. Invalid parts of the input fail closed and
 * are listed.
 */
@Command(name = "apply", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Enforce a manifest directory once, through a kernel backend.")
final class ApplyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ManifestDirOption manifests;

    @Mixin
    BackendOptions options;

    @Mixin
    BandwidthOptions bandwidth;

    @Option(names = "--node", paramLabel = "NAME", description = "Enforce for this node's pods only (default: every pod).")
    String node;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        ManifestDirOption.Compiled compiled;
        try {
            compiled = manifests.compile(node);
        } catch (IOException e) {
            err.println("npm-agent apply: cannot read --manifests " + manifests.dir + ": " + e.getMessage());
            return ExitCodes.USAGE;
        }
        compiled.problems().forEach(p -> err.println("  " + p));

        Backend backend;
        try {
            Backends.Chosen chosen = options.choose(bandwidth, new Metrics(new PrometheusRegistry()));
            backend = chosen.backend();
            out.println("npm-agent apply: backend " + chosen.reason());
        } catch (IllegalArgumentException | IllegalStateException e) {
            err.println("npm-agent apply: " + e.getMessage());
            return ExitCodes.USAGE;
        }
        try {
            backend.apply(new Batch(DesiredDelta.of(compiled.compiler().snapshot())));
        } catch (BackendException e) {
            err.println("npm-agent apply: " + backend.name() + " refused the state: " + e.getMessage());
            return ExitCodes.FAILED;
        }
        BackendStatus s = backend.status();
        out.printf("npm-agent apply: %s holds %s%s%n", s.backend(), s.summary(),
                options.netns == null ? "" : " in network namespace " + options.netns);
        return compiled.problems().isEmpty() ? ExitCodes.OK : ExitCodes.INPUT_PROBLEMS;
    }
}
