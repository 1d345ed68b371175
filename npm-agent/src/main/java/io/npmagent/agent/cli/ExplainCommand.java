package io.npmagent.agent.cli;

import io.npmagent.agent.flows.FlowReplay;
import io.npmagent.agent.source.manifest.ParsedManifests;
import io.npmagent.dataplane.eval.Endpoint;
import io.npmagent.dataplane.eval.ReferenceEvaluator;
import io.npmagent.dataplane.eval.Verdict;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.Protocol;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code npm-agent explain}: is one connection allowed, and by which policy rules. The answer comes from
 * the reference evaluator, which is what every backend is tested against. Exit 0 allowed, 3 denied, 2
 * when the question names a pod, address or port that does not exist.
 */
@Command(name = "explain", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Explain whether one connection is allowed, and by which policy rules.")
final class ExplainCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ManifestDirOption manifests;

    @Option(names = "--from", paramLabel = "NS/POD|IP", description = "The source: a pod or an address.")
    String from;

    @Option(names = "--to", paramLabel = "NS/POD|IP", description = "The destination: a pod or an address.")
    String to;

    @Option(names = "--port", paramLabel = "N", description = "Destination port, 1-65535.")
    int port;

    @Option(names = "--flow", paramLabel = "FILE",
            description = "Instead of --from/--to/--port: replay a flow the kernel recorded (a line of `npm-agent flows --output json`; - reads "
                    + "standard input) and say whether the kernel's verdict and what decided it agree with the policies in --manifests "
                    + "(exit 0 agree, 6 disagree).")
    String flow;

    @Option(names = "--protocol", defaultValue = "TCP", paramLabel = "PROTO",
            description = "TCP, UDP or SCTP (default: ${DEFAULT-VALUE}).")
    Protocol protocol;

    @Option(names = "--ipv6", description = "Use the pods' IPv6 addresses (default: IPv4). Implied by an IPv6 --from/--to.")
    boolean ipv6;

    /** A usage problem found after parsing; reported like picocli's own, with exit code 2. */
    private static final class Usage extends Exception {
        private static final long serialVersionUID = 1L;

        Usage(String message) {
            super(message);
        }
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            if (flow != null) {
                if (from != null || to != null || port != 0) {
                    throw new Usage("--flow replays a recorded flow: give it without --from, --to and --port");
                }
                ParsedManifests parsed = load();
                parsed.errors().forEach(e -> err.println("warning: " + e));
                FlowReplay.Outcome outcome = FlowReplay.replay(FlowReplay.read(flow, System.in), parsed.toClusterState(),
                        "in " + manifests.dir);
                outcome.warnings().forEach(w -> err.println("warning: " + w));
                out.println(outcome.text());
                out.flush();
                return outcome.agree() ? ExitCodes.OK : ExitCodes.DISAGREE;
            }
            if (from == null || to == null) {
                throw new Usage("give --from, --to and --port, or --flow");
            }
            if (port < 1 || port > 65535) {
                throw new Usage("--port must be between 1 and 65535, not " + port);
            }
            ParsedManifests parsed = load();
            parsed.errors().forEach(e -> err.println("warning: " + e));
            ClusterState cluster = parsed.toClusterState();
            boolean v6 = family();
            Endpoint source = endpoint(cluster, "--from", from, v6);
            Endpoint destination = endpoint(cluster, "--to", to, v6);
            Verdict verdict = new ReferenceEvaluator(cluster).allowed(source, destination, port, protocol);
            out.println(verdict.explain());
            out.flush();
            return verdict.allowed() ? ExitCodes.OK : ExitCodes.DENIED;
        } catch (Usage | FlowReplay.BadFlow e) {
            err.println("npm-agent explain: " + e.getMessage());
            return ExitCodes.USAGE;
        }
    }

    private ParsedManifests load() throws Usage {
        try {
            return manifests.load();
        } catch (IOException e) {
            throw new Usage("cannot read --manifests " + manifests.dir + ": " + e.getMessage());
        }
    }

    /** IPv6 when asked, or when either end is an IPv6 address; an IPv4 address with --ipv6 is a contradiction. */
    private boolean family() throws Usage {
        Optional<IpAddress> a = literal(from);
        Optional<IpAddress> b = literal(to);
        if (a.isPresent() && b.isPresent() && a.get().v6() != b.get().v6()) {
            throw new Usage("--from " + from + " and --to " + to + " are of different address families");
        }
        Optional<IpAddress> given = a.isPresent() ? a : b;
        if (given.isEmpty()) {
            return ipv6;
        }
        if (ipv6 && !given.get().v6()) {
            throw new Usage("--ipv6 was given, but " + given.get() + " is an IPv4 address");
        }
        return given.get().v6();
    }

    private static Optional<IpAddress> literal(String text) {
        if (text.indexOf('/') >= 0) {
            return Optional.empty();
        }
        try {
            return Optional.of(IpAddress.parse(text));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private Endpoint endpoint(ClusterState cluster, String option, String text, boolean v6) throws Usage {
        Optional<IpAddress> ip = literal(text);
        if (ip.isPresent()) {
            return Endpoint.external(ip.get());
        }
        PodKey key;
        try {
            key = PodKey.parse(text);
        } catch (IllegalArgumentException e) {
            throw new Usage(option + " " + Text.name(text) + " is neither NAMESPACE/POD nor an IP address");
        }
        Pod pod = cluster.pod(key).orElseThrow(
                () -> new Usage(option + ": no pod " + Text.pod(key) + " in " + manifests.dir));
        Optional<IpAddress> address = v6 ? pod.ipv6() : pod.ipv4();
        if (address.isEmpty()) {
            throw new Usage(option + ": pod " + Text.pod(key) + " has no " + (v6 ? "IPv6" : "IPv4") + " address"
                    + (pod.ips().isEmpty() ? " (it has no address at all: no status.podIP)" : ""));
        }
        return Endpoint.pod(key, address.get());
    }
}
