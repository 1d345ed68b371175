package io.npmagent.agent.source.k8s;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.npmagent.dataplane.model.ClusterNetworkPolicy;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.LabelSelector;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;

/**
 * A {@code policy.networking.k8s.io/v1beta1} ClusterNetworkPolicy, as JSON (a manifest, or the API
 * server's object: client-java has no type for it), read into the model as written. Validation and
 * defaulting are {@code ClusterPolicyNormalizer}'s; this reads shapes only.
 *
 * <p>A field of the wrong JSON type (which the CRD's schema keeps the API server from storing, but a
 * manifest may hold) is an error under its path, and is read as something the normalizer fails closed
 * on, never as absent where absent means more: an unreadable {@code protocols} is one empty entry (not
 * "every port"), an unreadable {@code ingress} or {@code egress} one unreadable rule (not "no rules"),
 * anything else inside a rule or the policy null. Fields this version does not know are not errors: a
 * peer written for a newer API has none of the fields read here, and the normalizer fails it closed as
 * the API says.
 */
public final class ClusterPolicyJson {
    public static final String GROUP = "policy.networking.k8s.io";
    public static final String VERSION = "v1beta1";
    public static final String RESOURCE = "clusternetworkpolicies";
    public static final String API_VERSION = GROUP + "/" + VERSION;
    public static final String KIND = "ClusterNetworkPolicy";

    private ClusterPolicyJson() {}

    /** The policy {@code name} as {@code object} says; type errors go to {@code errors}. */
    public static ClusterNetworkPolicy read(String name, JsonObject object, FieldErrors errors) {
        JsonObject spec = object(object, "spec", "spec", errors);
        if (spec == null) {
            errors.add("spec", "required");
            return new ClusterNetworkPolicy(name, null, null, null, null, null);
        }
        return new ClusterNetworkPolicy(name,
                string(spec, "tier", "spec.tier", errors),
                integer(spec, "priority", "spec.priority", errors),
                subject(spec, errors),
                rules(spec, "ingress", "from", errors),
                rules(spec, "egress", "to", errors));
    }

    private static ClusterNetworkPolicy.Subject subject(JsonObject spec, FieldErrors errors) {
        JsonObject subject = object(spec, "subject", "spec.subject", errors);
        if (subject == null) {
            return null;
        }
        return new ClusterNetworkPolicy.Subject(selector(subject, "namespaces", "spec.subject.namespaces", errors),
                namespacedPods(subject, "spec.subject.pods", errors));
    }

    private static List<ClusterNetworkPolicy.Rule> rules(JsonObject spec, String direction, String peersField, FieldErrors errors) {
        String at = "spec." + direction;
        if (!spec.has(direction) || spec.get(direction).isJsonNull()) {
            return null;
        }
        JsonArray rules = array(spec, direction, at, errors);
        if (rules == null) {
            List<ClusterNetworkPolicy.Rule> unreadable = new ArrayList<>();
            unreadable.add(null); // one rule that denies whatever reaches it
            return unreadable;
        }
        return items(rules, at, errors, (item, itemAt) -> {
            JsonObject rule = item.isJsonObject() ? item.getAsJsonObject() : null;
            if (rule == null) {
                errors.add(itemAt, "must be an object");
                return null;
            }
            return new ClusterNetworkPolicy.Rule(
                    string(rule, "name", itemAt + ".name", errors),
                    string(rule, "action", itemAt + ".action", errors),
                    peers(rule, peersField, itemAt + "." + peersField, errors),
                    protocols(rule, itemAt + ".protocols", errors));
        });
    }

    private static List<ClusterNetworkPolicy.Peer> peers(JsonObject rule, String field, String at, FieldErrors errors) {
        JsonArray peers = array(rule, field, at, errors);
        if (peers == null) {
            return null;
        }
        return items(peers, at, errors, (item, itemAt) -> {
            if (!item.isJsonObject()) {
                errors.add(itemAt, "must be an object");
                return new ClusterNetworkPolicy.Peer(null, null, null, null, null);
            }
            JsonObject peer = item.getAsJsonObject();
            return new ClusterNetworkPolicy.Peer(
                    selector(peer, "namespaces", itemAt + ".namespaces", errors),
                    namespacedPods(peer, itemAt + ".pods", errors),
                    selector(peer, "nodes", itemAt + ".nodes", errors),
                    strings(peer, "networks", itemAt + ".networks", errors),
                    strings(peer, "domainNames", itemAt + ".domainNames", errors));
        });
    }

    private static List<ClusterNetworkPolicy.ProtocolMatch> protocols(JsonObject rule, String at, FieldErrors errors) {
        if (!rule.has("protocols") || rule.get("protocols").isJsonNull()) {
            return null;
        }
        ClusterNetworkPolicy.ProtocolMatch unreadable = new ClusterNetworkPolicy.ProtocolMatch(null, null, null, null);
        JsonArray protocols = array(rule, "protocols", at, errors);
        if (protocols == null) {
            return List.of(unreadable); // never "every port"
        }
        return items(protocols, at, errors, (item, itemAt) -> {
            if (!item.isJsonObject()) {
                errors.add(itemAt, "must be an object");
                return unreadable;
            }
            JsonObject p = item.getAsJsonObject();
            return new ClusterNetworkPolicy.ProtocolMatch(
                    transport(p, "tcp", itemAt + ".tcp", errors),
                    transport(p, "udp", itemAt + ".udp", errors),
                    transport(p, "sctp", itemAt + ".sctp", errors),
                    string(p, "destinationNamedPort", itemAt + ".destinationNamedPort", errors));
        });
    }

    private static ClusterNetworkPolicy.TransportMatch transport(JsonObject protocol, String field, String at, FieldErrors errors) {
        JsonObject transport = object(protocol, field, at, errors);
        if (transport == null) {
            return null;
        }
        JsonObject port = object(transport, "destinationPort", at + ".destinationPort", errors);
        if (port == null) {
            return new ClusterNetworkPolicy.TransportMatch(null);
        }
        JsonObject range = object(port, "range", at + ".destinationPort.range", errors);
        return new ClusterNetworkPolicy.TransportMatch(new ClusterNetworkPolicy.Port(
                integer(port, "number", at + ".destinationPort.number", errors),
                range == null ? null : new ClusterNetworkPolicy.PortRange(
                        integer(range, "start", at + ".destinationPort.range.start", errors),
                        integer(range, "end", at + ".destinationPort.range.end", errors))));
    }

    private static ClusterNetworkPolicy.NamespacedPods namespacedPods(JsonObject parent, String at, FieldErrors errors) {
        JsonObject pods = object(parent, "pods", at, errors);
        if (pods == null) {
            return null;
        }
        return new ClusterNetworkPolicy.NamespacedPods(selector(pods, "namespaceSelector", at + ".namespaceSelector", errors),
                selector(pods, "podSelector", at + ".podSelector", errors));
    }

    /** A metav1.LabelSelector, read as NetworkPolicy's are; unreadable is null, which no position reads as "more". */
    private static LabelSelector selector(JsonObject parent, String field, String at, FieldErrors errors) {
        JsonObject selector = object(parent, field, at, errors);
        if (selector == null) {
            return null;
        }
        try {
            return KubeObjects.selector(JSON.getGson().fromJson(selector, V1LabelSelector.class));
        } catch (RuntimeException e) {
            errors.add(at, "is not a label selector: " + e.getMessage());
            return null;
        }
    }

    private static <T> List<T> items(JsonArray array, String at, FieldErrors errors, BiFunction<JsonElement, String, T> read) {
        List<T> out = new ArrayList<>();
        for (int i = 0; i < array.size(); i++) {
            JsonElement item = array.get(i);
            out.add(read.apply(item, at + "[" + i + "]"));
        }
        return out;
    }

    private static List<String> strings(JsonObject parent, String field, String at, FieldErrors errors) {
        JsonArray array = array(parent, field, at, errors);
        if (array == null) {
            return null;
        }
        return items(array, at, errors, (item, itemAt) -> {
            if (item.isJsonPrimitive() && item.getAsJsonPrimitive().isString()) {
                return item.getAsString();
            }
            errors.add(itemAt, "must be a string");
            return null;
        });
    }

    private static JsonObject object(JsonObject parent, String field, String at, FieldErrors errors) {
        JsonElement e = parent.get(field);
        if (e == null || e.isJsonNull()) {
            return null;
        }
        if (!e.isJsonObject()) {
            errors.add(at, "must be an object");
            return null;
        }
        return e.getAsJsonObject();
    }

    private static JsonArray array(JsonObject parent, String field, String at, FieldErrors errors) {
        JsonElement e = parent.get(field);
        if (e == null || e.isJsonNull()) {
            return null;
        }
        if (!e.isJsonArray()) {
            errors.add(at, "must be a list");
            return null;
        }
        return e.getAsJsonArray();
    }

    private static String string(JsonObject parent, String field, String at, FieldErrors errors) {
        JsonElement e = parent.get(field);
        if (e == null || e.isJsonNull()) {
            return null;
        }
        if (e.isJsonPrimitive() && e.getAsJsonPrimitive().isString()) {
            return e.getAsString();
        }
        errors.add(at, "must be a string");
        return null;
    }

    private static Integer integer(JsonObject parent, String field, String at, FieldErrors errors) {
        JsonElement e = parent.get(field);
        if (e == null || e.isJsonNull()) {
            return null;
        }
        if (e.isJsonPrimitive() && e.getAsJsonPrimitive().isNumber()) {
            JsonPrimitive p = e.getAsJsonPrimitive();
            double d = p.getAsDouble();
            if (d == Math.rint(d) && d >= Integer.MIN_VALUE && d <= Integer.MAX_VALUE) {
                return (int) d;
            }
        }
        errors.add(at, "must be an integer");
        return null;
    }
}
