package io.npmagent.agent.flows;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.npmagent.dataplane.eval.Decision;
import io.npmagent.dataplane.eval.Endpoint;
import io.npmagent.dataplane.eval.ReferenceEvaluator;
import io.npmagent.dataplane.eval.Verdict;
import io.npmagent.dataplane.flow.Attribution;
import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * {@code npm-agent explain --flow}: a flow the kernel recorded ({@link FlowJson}'s line), replayed through
 * the reference evaluator against a cluster state, and the two compared: the kernel's verdict on the
 * side it judged, and what decided it (the same rule, or the same isolating policies), against the
 * policies' intent. A disagreement is either a dataplane bug or a state that changed since the flow:
 * the text says which side holds what, the caller decides.
 */
public final class FlowReplay {
    /** A flow line that cannot be replayed; the message names the field. */
    public static final class BadFlow extends Exception {
        private static final long serialVersionUID = 1L;

        BadFlow(String message) {
            super(message);
        }
    }

    /** The replay: whether kernel and intent agree, the text for people, and warnings (a pod missing from the state). */
    public record Outcome(boolean agree, String text, List<String> warnings) {}

    private FlowReplay() {}

    /** The first non-blank line of {@code file} ({@code -}: {@code stdin}), as a JSON object. */
    public static JsonObject read(String file, InputStream stdin) throws BadFlow {
        String text;
        try {
            text = file.equals("-") ? new String(stdin.readAllBytes(), StandardCharsets.UTF_8) : Files.readString(Path.of(file));
        } catch (IOException e) {
            throw new BadFlow("cannot read --flow " + file + ": " + e.getMessage());
        }
        String line = text.lines().filter(l -> !l.isBlank()).findFirst()
                .orElseThrow(() -> new BadFlow("--flow " + file + " holds no flow (a line of `npm-agent flows --output json`)"));
        try {
            JsonElement e = JsonParser.parseString(line);
            if (!e.isJsonObject()) {
                throw new BadFlow("--flow " + file + ": the first line is not a JSON object");
            }
            return e.getAsJsonObject();
        } catch (JsonParseException e) {
            throw new BadFlow("--flow " + file + ": the first line is not JSON: " + e.getMessage());
        }
    }

    public static Outcome replay(JsonObject flow, ClusterState cluster, String where) throws BadFlow {
        List<String> warnings = new ArrayList<>();
        String protocolName = string(flow, "protocol");
        Protocol protocol;
        try {
            protocol = Protocol.parse(protocolName);
        } catch (IllegalArgumentException e) {
            throw new BadFlow("the flow's protocol " + ApiSyntax.quote(protocolName) + " is none a policy names (TCP, UDP, SCTP): nothing to replay");
        }
        int port = flow.has("port") && !flow.get("port").isJsonNull() ? flow.get("port").getAsInt() : -1;
        if (port < 1 || port > 65535) {
            throw new BadFlow("the flow's field port must be 1-65535");
        }
        Endpoint source = endpoint(flow, "source", cluster, where, warnings);
        Endpoint destination = endpoint(flow, "destination", cluster, where, warnings);
        String direction = string(flow, "direction");
        if (!direction.equals("ingress") && !direction.equals("egress")) {
            throw new BadFlow("the flow's field direction must be ingress or egress, not " + ApiSyntax.quote(direction));
        }
        Verdict intent = new ReferenceEvaluator(cluster).allowed(source, destination, port, protocol);
        Verdict.Side side = direction.equals("ingress") ? intent.ingress() : intent.egress();
        boolean kernelAllowed = string(flow, "verdict").equals("allowed");
        String reason = flow.has("reason") && !flow.get("reason").isJsonNull() ? flow.get("reason").getAsString() : null;
        JsonObject attribution = flow.has("attribution") && flow.get("attribution").isJsonObject() ? flow.getAsJsonObject("attribution") : null;
        String kernelBy = attribution == null ? "(no attribution recorded)" : attribution.get("text").getAsString();

        StringBuilder text = new StringBuilder(intent.explain()).append('\n');
        text.append("kernel (node ").append(string(flow, "node")).append(", ").append(string(flow, "backend")).append("): ")
                .append(kernelAllowed ? "ALLOWED" : "DENIED").append(' ').append(direction).append(" by ").append(kernelBy).append('\n');
        text.append("intent: ").append(side.allowed() ? "ALLOWED" : "DENIED").append(' ').append(direction).append(" by ")
                .append(side.attribution()).append('\n');
        if (reason != null && !reason.equals("policy")) {
            text.append("AGREE: not a policy's drop (").append(reason).append("): the policies' intent above is for reference");
            return new Outcome(true, text.toString(), warnings);
        }
        if (kernelAllowed != side.allowed()) {
            text.append("DISAGREE: the kernel ").append(kernelAllowed ? "allowed" : "denied").append(" what the policies ")
                    .append(side.allowed() ? "allow" : "deny").append(" (a dataplane bug, or the policies changed since ")
                    .append(string(flow, "last")).append(')');
            return new Outcome(false, text.toString(), warnings);
        }
        String mismatch = attribution == null ? null : attributionMismatch(attribution, side);
        if (mismatch != null) {
            text.append("DISAGREE on what decided: ").append(mismatch).append(" (the policies may have changed since ")
                    .append(string(flow, "last")).append(')');
            return new Outcome(false, text.toString(), warnings);
        }
        text.append("AGREE");
        return new Outcome(true, text.toString(), warnings);
    }

    /** Null when the kernel's attribution names what the intent's decision names; else what differs. */
    private static String attributionMismatch(JsonObject kernel, Verdict.Side side) {
        String kind = kernel.get("kind").getAsString();
        Decision decision = side.decision();
        if (decision instanceof Decision.ByClusterRule rule) {
            String expected = new Attribution.ByClusterRule(rule.rule(), rule.action()).text();
            return expected.equals(kernel.get("text").getAsString()) ? null
                    : "the kernel names " + kernel.get("text").getAsString() + ", the policies " + expected;
        }
        if (decision instanceof Decision.ByNetworkPolicy && !side.allowed()) {
            TreeSet<String> kernelPolicies = new TreeSet<>();
            kernel.getAsJsonArray("policies").forEach(p -> kernelPolicies.add(p.getAsJsonObject().get("namespace").getAsString() + "/"
                    + p.getAsJsonObject().get("name").getAsString()));
            TreeSet<String> isolating = new TreeSet<>();
            side.isolatedBy().forEach((PolicyKey k) -> isolating.add(k.toString()));
            return kind.equals("NetworkPolicy") && kernelPolicies.equals(isolating) ? null
                    : "the kernel names " + kernel.get("text").getAsString() + ", the policies isolating the pod are " + isolating;
        }
        return null; // allowed by NetworkPolicy or by default: the kernel's allow entries carry no rule to compare
    }

    /** One end: the pod the flow names, if the state has it (at the address the flow recorded), else the address. */
    private static Endpoint endpoint(JsonObject flow, String end, ClusterState cluster, String where, List<String> warnings) throws BadFlow {
        if (!flow.has(end) || !flow.get(end).isJsonObject()) {
            throw new BadFlow("the flow has no field " + end);
        }
        JsonObject o = flow.getAsJsonObject(end);
        IpAddress address;
        try {
            address = IpAddress.parse(string(o, "address", end + ".address"));
        } catch (IllegalArgumentException e) {
            throw new BadFlow("the flow's field " + end + ".address: " + e.getMessage());
        }
        if (o.has("pod") && !o.get("pod").isJsonNull()) {
            PodKey pod;
            try {
                pod = PodKey.parse(o.get("pod").getAsString());
            } catch (IllegalArgumentException e) {
                throw new BadFlow("the flow's field " + end + ".pod: " + e.getMessage());
            }
            if (cluster.pod(pod).isPresent()) {
                return Endpoint.pod(pod, address);
            }
            warnings.add("the flow's " + end + " pod " + pod + " is not " + where + ": replayed as its address " + address);
        }
        return Endpoint.external(address);
    }

    private static String string(JsonObject o, String field) throws BadFlow {
        return string(o, field, field);
    }

    private static String string(JsonObject o, String field, String name) throws BadFlow {
        if (!o.has(field) || o.get(field).isJsonNull() || !o.get(field).isJsonPrimitive()) {
            throw new BadFlow("the flow has no field " + name);
        }
        return o.get(field).getAsString();
    }
}
