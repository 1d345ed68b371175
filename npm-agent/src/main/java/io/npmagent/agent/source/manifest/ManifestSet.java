package io.npmagent.agent.source.manifest;

import com.google.gson.Gson;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NetworkPolicy;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.npmagent.agent.source.k8s.ClusterPolicyJson;
import io.npmagent.agent.source.k8s.KubeObjects;
import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.ClusterNetworkPolicy;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.ValidationError;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Accumulates objects from one or more streams, with where each came from, so that a duplicate can
 * name both places. Not thread-safe; one per load.
 */
final class ManifestSet {
    static final String DEFAULT_NAMESPACE = "default";

    private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9._:-]{1,253}");
    private static final Pattern PLAIN_API_VERSION = Pattern.compile("[A-Za-z0-9./-]{1,253}");

    private record Loaded<T>(String where, T object) {}

    private final Map<ObjectRef, Loaded<Namespace>> namespaces = new LinkedHashMap<>();
    private final Map<ObjectRef, Loaded<Pod>> pods = new LinkedHashMap<>();
    private final Map<ObjectRef, Loaded<NetworkPolicy>> policies = new LinkedHashMap<>();
    private final Map<ObjectRef, Loaded<ClusterNetworkPolicy>> clusterPolicies = new LinkedHashMap<>();
    private final List<String> errors = new ArrayList<>();

    /**
     * Every problem goes through here. Messages embed text from the input (file names, and names that
     * ValidationError prints raw), so control characters are escaped: one problem is one line.
     */
    void report(String message) {
        StringBuilder sb = new StringBuilder(message.length());
        message.codePoints().forEach(c -> {
            if (c == '\n') {
                sb.append("\\n");
            } else if (Character.isISOControl(c) || c == 0x2028 || c == 0x2029) {
                sb.append(String.format("\\u%04x", c));
            } else {
                sb.appendCodePoint(c);
            }
        });
        errors.add(sb.toString());
    }

    void addStream(String text, String origin) {
        String stream = text.startsWith("\uFEFF") ? text.substring(1) : text;
        for (SafeYaml.Document doc : SafeYaml.split(stream)) {
            String where = origin + " document " + doc.index();
            JsonElement json;
            try {
                json = SafeYaml.parse(doc);
            } catch (SafeYaml.BadYaml e) {
                report(where + ": " + e.getMessage());
                continue;
            }
            if (json == null) {
                continue; // only comments or blanks, as between two "---"
            }
            if (!json.isJsonObject()) {
                report(where + ": not an object (a manifest is a mapping with apiVersion and kind)");
                continue;
            }
            JsonObject object = json.getAsJsonObject();
            if ("List".equals(string(object, "kind")) && "v1".equals(string(object, "apiVersion"))) {
                addList(object, where);
            } else {
                addObject(object, where);
            }
        }
    }

    /** {@code kind: List} is what {@code kubectl get -o yaml} writes; its items load as documents would. */
    private void addList(JsonObject list, String where) {
        JsonElement items = list.get("items");
        if (items == null || items.isJsonNull()) {
            return;
        }
        if (!items.isJsonArray()) {
            report(where + " (List): items must be a list");
            return;
        }
        for (int i = 0; i < items.getAsJsonArray().size(); i++) {
            JsonElement item = items.getAsJsonArray().get(i);
            String at = where + " item " + i;
            if (item.isJsonObject()) {
                addObject(item.getAsJsonObject(), at);
            } else {
                report(at + ": not an object");
            }
        }
    }

    private void addObject(JsonObject object, String where) {
        String kind = string(object, "kind");
        String apiVersion = string(object, "apiVersion");
        JsonObject meta = object.get("metadata") != null && object.get("metadata").isJsonObject()
                ? object.getAsJsonObject("metadata") : new JsonObject();
        String name = string(meta, "name");
        String namespace = string(meta, "namespace");
        String at = where + " (" + describe(kind, namespace, name) + ")";
        if (kind == null) {
            report(at + ": no kind");
            return;
        }
        String wanted = switch (kind) {
            case "Namespace", "Pod", "Service" -> "v1";
            case "NetworkPolicy" -> "networking.k8s.io/v1";
            case ClusterPolicyJson.KIND -> ClusterPolicyJson.API_VERSION;
            default -> null;
        };
        if (wanted == null) {
            report(at + ": unsupported kind (Namespace, Pod, NetworkPolicy and ClusterNetworkPolicy are read, Service accepted)");
            return;
        }
        if (!wanted.equals(apiVersion)) {
            report(at + ": apiVersion " + (apiVersion == null ? "missing"
                    : (PLAIN_API_VERSION.matcher(apiVersion).matches() ? apiVersion : ApiSyntax.quote(apiVersion))
                            + " unsupported")
                    + ", " + kind + " is read as " + wanted);
            return;
        }
        if (name == null || name.isEmpty()) {
            report(at + ": metadata.name is required");
            return;
        }
        try {
            switch (kind) {
                case "Namespace" -> {
                    Namespace ns = KubeObjects.namespace(decode(object, V1Namespace.class));
                    put(namespaces, ObjectRef.namespace(ns.name()), where, ns);
                }
                case "Pod" -> addPod(decode(object, V1Pod.class), where);
                case ClusterPolicyJson.KIND -> {
                    // Cluster-scoped: a metadata.namespace is ignored, as the API server ignores it.
                    ObjectRef ref = ObjectRef.clusterNetworkPolicy(name);
                    FieldErrors fieldErrors = new FieldErrors(ref);
                    ClusterNetworkPolicy policy = ClusterPolicyJson.read(name, object, fieldErrors);
                    for (ValidationError e : fieldErrors.list()) {
                        report(where + ": " + e);
                    }
                    put(clusterPolicies, ref, where, policy);
                }
                case "Service" -> {
                    // Accepted, not modelled: policy is judged on the backend after kube-proxy's DNAT, so a
                    // Service changes no verdict; the sandbox applies it for kube-proxy.
                }
                default -> {
                    V1NetworkPolicy v1 = decode(object, V1NetworkPolicy.class);
                    defaultNamespace(v1.getMetadata());
                    NetworkPolicy policy = KubeObjects.policy(v1);
                    put(policies, ObjectRef.of(policy.key()), where, policy);
                }
            }
        } catch (RuntimeException e) {
            // Gson and client-java's validation throw several unchecked types for malformed input
            // (JsonParseException, IllegalArgumentException, IllegalStateException for a string where an
            // object belongs...). Whatever it is, it is this document's problem, not the load's.
            report(at + ": does not decode as a " + kind + ": " + decodeProblem(e));
        }
    }

    private void addPod(V1Pod v1, String where) {
        defaultNamespace(v1.getMetadata());
        FieldErrors fieldErrors = new FieldErrors(
                ObjectRef.of(new PodKey(v1.getMetadata().getNamespace(), v1.getMetadata().getName())));
        Pod pod = KubeObjects.pod(v1, fieldErrors);
        for (ValidationError e : fieldErrors.list()) {
            report(where + ": " + e);
        }
        put(pods, ObjectRef.of(pod.key()), where, pod);
    }

    private static void defaultNamespace(V1ObjectMeta meta) {
        if (meta.getNamespace() == null || meta.getNamespace().isEmpty()) {
            meta.setNamespace(DEFAULT_NAMESPACE);
        }
    }

    private <T> void put(Map<ObjectRef, Loaded<T>> map, ObjectRef ref, String where, T object) {
        Loaded<T> earlier = map.put(ref, new Loaded<>(where, object));
        if (earlier != null) {
            report("duplicate " + describe(ref.kind(), ref.namespace(), ref.name()) + " in " + earlier.where()
                    + " and " + where + ": the later one is used");
        }
    }

    ParsedManifests result() {
        return new ParsedManifests(
                namespaces.values().stream().map(Loaded::object).toList(),
                pods.values().stream().map(Loaded::object).toList(),
                policies.values().stream().map(Loaded::object).toList(),
                clusterPolicies.values().stream().map(Loaded::object).toList(),
                errors);
    }

    private static <T> T decode(JsonObject object, Class<T> type) {
        Gson gson = JSON.getGson();
        T decoded = gson.fromJson(object, type);
        if (decoded == null) {
            throw new IllegalArgumentException("empty object");
        }
        return decoded;
    }

    /**
     * client-java's messages for an unknown field end with the whole object as JSON; cut that off, and
     * keep the rest on one line.
     */
    private static String decodeProblem(RuntimeException e) {
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        int json = message.indexOf(". JSON:");
        if (json >= 0) {
            message = message.substring(0, json);
        }
        message = message.replace("java.lang.NumberFormatException: ", "")
                .replace("java.lang.IllegalStateException: ", "");
        String quoted = ApiSyntax.quote(message);
        return quoted.substring(1, quoted.length() - 1);
    }

    private static String string(JsonObject object, String field) {
        JsonElement e = object.get(field);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : null;
    }

    /** {@code Pod shop/api}, with any name that is not plain quoted, so that it cannot forge a line. */
    static String describe(String kind, String namespace, String name) {
        StringBuilder sb = new StringBuilder(kind == null ? "" : display(kind));
        if (name != null) {
            sb.append(kind == null ? "" : " ");
            if (namespace != null && !namespace.isEmpty()) {
                sb.append(display(namespace)).append('/');
            }
            sb.append(display(name));
        }
        return sb.toString();
    }

    static String display(String text) {
        return PLAIN.matcher(text).matches() ? text : ApiSyntax.quote(text);
    }
}
