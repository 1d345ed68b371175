package io.npmagent.agent.cli;

import io.npmagent.agent.config.AgentConfig;
import io.npmagent.dataplane.model.ApiSyntax;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code npm-agent flows}: the node's flow verdicts, as the running agent serves them on its debug listener
 * ({@code /debug/flows}). The default address is the shipped ConfigMap's DebugListeningAddress and
 * DebugListeningPort, so in the agent's pod {@code kubectl exec ... -- npm-agent flows} just works. The agent
 * checks the filters; what it refuses is a usage error here, naming the option. Exit 0 after printing
 * (with {@code --follow}: when the agent ends the stream), 2 for a bad option, 4 when the agent cannot be reached.
 */
@Command(name = "flows", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Print the flow verdicts the agent on this node holds: what its kernel denied (and, if enabled, allowed), "
                + "with the policy that decided.")
final class FlowsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--follow", description = "Keep printing flows as reports come, until interrupted.")
    boolean follow;

    @Option(names = "--verdict", paramLabel = "allowed|denied", description = "Only flows with this verdict.")
    String verdict;

    @Option(names = "--pod", paramLabel = "NS/NAME", description = "Only flows from or to this pod.")
    String pod;

    @Option(names = "--namespace", paramLabel = "NS", description = "Only flows from or to a pod of this namespace.")
    String namespace;

    @Option(names = "--policy", paramLabel = "NAME", description = "Only flows this policy decided (NetworkPolicy NS/NAME or NAME; ClusterNetworkPolicy NAME).")
    String policy;

    @Option(names = "--since", paramLabel = "DURATION|INSTANT", description = "Only flows with a packet since then: 30s, 5m, 2h, 1d, or 2026-12-07T00:40:00Z.")
    String since;

    @Option(names = "--output", defaultValue = "text", paramLabel = "text|json", description = "text (default) or json: one JSON object a line.")
    String output;

    @Option(names = "--address", paramLabel = "HOST:PORT", description = "The agent's debug listener (default: ${DEFAULT-VALUE}).")
    String address = AgentConfig.DEFAULTS.debugListeningAddress() + ":" + AgentConfig.DEFAULTS.debugListeningPort();

    /** Parameter of /debug/flows → the option it comes from, so the agent's refusal names what the user typed. */
    private static final Map<String, String> OPTIONS = Map.of("verdict", "--verdict", "pod", "--pod", "namespace", "--namespace",
            "policy", "--policy", "since", "--since", "output", "--output", "follow", "--follow");

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        URI uri;
        try {
            uri = uri();
        } catch (IllegalArgumentException e) {
            err.println("npm-agent flows: --address " + ApiSyntax.quote(address) + ": HOST:PORT (" + e.getMessage() + ")");
            return ExitCodes.USAGE;
        }
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<Stream<String>> response;
        try {
            response = client.send(HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofLines());
        } catch (IOException e) {
            err.println("npm-agent flows: cannot reach the agent's debug listener at " + address + " (" + e + "); is the agent running "
                    + "on this node, and are DebugListeningAddress and DebugListeningPort as given?");
            return ExitCodes.FAILED;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ExitCodes.FAILED;
        }
        try (Stream<String> lines = response.body()) {
            if (response.statusCode() == 400) {
                String message = lines.collect(Collectors.joining(" ")).strip();
                err.println("npm-agent flows: " + option(message));
                return ExitCodes.USAGE;
            }
            if (response.statusCode() != 200) {
                err.println("npm-agent flows: the agent answered " + response.statusCode() + ": " + lines.collect(Collectors.joining(" ")).strip());
                return ExitCodes.FAILED;
            }
            Iterator<String> it = lines.iterator();
            while (it.hasNext()) {
                String line = it.next();
                if (!line.isEmpty()) { // a follow's keep-alive
                    out.println(line);
                    out.flush();
                }
            }
        } catch (java.io.UncheckedIOException e) {
            err.println("npm-agent flows: the agent's stream ended: " + e.getCause());
            return ExitCodes.FAILED;
        }
        return ExitCodes.OK;
    }

    /** The agent's "bad parameter since: ..." as "--since: ...". */
    private static String option(String message) {
        String rest = message.startsWith("bad parameter ") ? message.substring("bad parameter ".length()) : message;
        int colon = rest.indexOf(':');
        String parameter = colon < 0 ? "" : rest.substring(0, colon);
        return OPTIONS.containsKey(parameter) ? OPTIONS.get(parameter) + rest.substring(colon) : message;
    }

    URI uri() {
        int colon = address.lastIndexOf(':');
        if (colon <= 0 || colon == address.length() - 1) {
            throw new IllegalArgumentException("no port");
        }
        int port;
        try {
            port = Integer.parseInt(address.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("the port is not a number");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("the port is not from 1 to 65535");
        }
        String host = address.substring(0, colon);
        if (host.contains(":") && !host.startsWith("[")) {
            host = "[" + host + "]"; // an IPv6 address
        }
        Map<String, String> q = new LinkedHashMap<>();
        put(q, "verdict", verdict);
        put(q, "pod", pod);
        put(q, "namespace", namespace);
        put(q, "policy", policy);
        put(q, "since", since);
        put(q, "output", output);
        if (follow) {
            q.put("follow", "true");
        }
        String query = q.entrySet().stream().map(e -> e.getKey() + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        return URI.create("http://" + host + ":" + port + "/debug/flows" + (query.isEmpty() ? "" : "?" + query));
    }

    private static void put(Map<String, String> q, String name, String value) {
        if (value != null) {
            q.put(name, value);
        }
    }
}
