package io.npmagent.agent.flows;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import io.npmagent.dataplane.flow.Attribution;
import io.npmagent.dataplane.flow.FlowRecord;
import java.util.List;

/**
 * A flow as one JSON object on one line: the schema of {@code /debug/flows?output=json}, {@code npm-agent flows
 * --output json} and {@code sandbox flows --output json} (the README lists it). Every field of
 * {@link FlowRecord} is always present, null where it has no value, so a reader never guesses whether a field
 * was left out. Names are lower camel case; enumerations are lower case as the CLI takes them
 * ({@code verdict}, {@code direction}) or as the metrics label them ({@code reason}).
 */
public final class FlowJson {
    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().serializeNulls().create();

    private FlowJson() {}

    /** One line, no newline; control characters in names come out escaped, as JSON escapes them. */
    public static String line(FlowRecord f) {
        return GSON.toJson(object(f));
    }

    public static JsonObject object(FlowRecord f) {
        JsonObject o = new JsonObject();
        o.addProperty("first", f.first().toString());
        o.addProperty("last", f.last() == null ? null : f.last().toString());
        o.addProperty("node", f.node());
        o.addProperty("backend", f.backend());
        o.addProperty("verdict", f.verdict().name().toLowerCase());
        o.addProperty("reason", f.reason() == null ? null : f.reason().label());
        o.addProperty("direction", f.direction() == null ? null : f.direction().apiName().toLowerCase());
        o.addProperty("reporter", f.reporter());
        o.addProperty("family", f.family());
        o.addProperty("protocol", f.protocol());
        o.add("source", peer(f.source()));
        o.add("destination", peer(f.destination()));
        o.addProperty("port", f.port());
        o.add("service", service(f.service()));
        o.addProperty("packets", f.packets());
        o.addProperty("bytes", f.bytes());
        o.addProperty("reports", f.reports());
        o.add("attribution", attribution(f.attribution()));
        o.addProperty("nearest", f.nearest());
        return o;
    }

    private static JsonElement peer(FlowRecord.Peer p) {
        JsonObject o = new JsonObject();
        o.addProperty("address", p.address() == null ? null : p.address().toString());
        o.addProperty("pod", p.pod() == null ? null : p.pod().toString());
        return o;
    }

    private static JsonElement service(FlowRecord.Service s) {
        if (s == null) {
            return JsonNull.INSTANCE;
        }
        JsonObject o = new JsonObject();
        o.addProperty("address", s.address().toString());
        o.addProperty("port", s.port());
        return o;
    }

    /** {@code {kind, tier, policies: [{namespace, name, rule}], text}}; null when the kernel's reference is unknown to this run. */
    private static JsonElement attribution(Attribution a) {
        if (a == null) {
            return JsonNull.INSTANCE;
        }
        JsonObject o = new JsonObject();
        o.addProperty("kind", a.kind());
        o.addProperty("tier", a.tier() == null ? null : a.tier().apiName());
        JsonArray policies = new JsonArray();
        for (List<String> s : a.named()) {
            JsonObject p = new JsonObject();
            p.addProperty("namespace", s.get(0));
            p.addProperty("name", s.get(1));
            p.addProperty("rule", s.get(2));
            policies.add(p);
        }
        o.add("policies", policies);
        o.addProperty("text", a.text());
        return o;
    }
}
