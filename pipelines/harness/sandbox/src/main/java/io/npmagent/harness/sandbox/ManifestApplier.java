package io.npmagent.harness.sandbox;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.ApiClient;
import io.npmagent.agent.source.manifest.Manifests;
import io.npmagent.dataplane.model.ApiSyntax;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import okhttp3.MediaType;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * Keeps the API server holding what the sandbox's manifest directory says, as {@code kubectl apply
 * --server-side --force-conflicts} and {@code kubectl delete} would: each object is applied (created
 * or updated), in the order namespaces, services, pods, NetworkPolicies, ClusterNetworkPolicies, and an object that left the
 * directory is deleted. Pods are put on one of the sandbox's nodes ({@link PodPlacement}: the scheduler's
 * part), and get an image if
 * they name none; a pod change the server calls immutable is a delete and a create, as kubelet and a
 * controller would do it.
 *
 * <p>A namespace the directory's objects use but do not declare is created bare. An object the server rejects is reported with the server's words and the rest is applied; a
 * refusal that passes (a new namespace's default ServiceAccount not yet made) is tried again on the next
 * call. As with the agent's own directory source, a file with a document that does not parse keeps the
 * objects it had, and so does a file of zero bytes (one being written): a half-written file never
 * deletes anything. (Deleting here is not free: a namespace takes its pods along.)
 */
final class ManifestApplier {
    private static final System.Logger LOG = System.getLogger(ManifestApplier.class.getName());
    private static final MediaType APPLY = MediaType.get("application/apply-patch+yaml");
    private static final List<String> ORDER = List.of("Namespace", "Service", "Pod", "NetworkPolicy", "ClusterNetworkPolicy");
    static final String IMAGE = "registry.invalid/npm-agent-sandbox/pod";
    private static final List<String> CLUSTER_SCOPED = List.of("Namespace", "ClusterNetworkPolicy");

    private final ApiClient admin;
    private final PodPlacement placement;
    /** What the server holds of ours: key (kind/namespace/name) to the object as last applied. */
    private final Map<String, JsonObject> applied = new LinkedHashMap<>();
    /** Each file's objects as last read cleanly, kept while a later version of the file does not parse. */
    private final Map<String, List<JsonObject>> lastGood = new HashMap<>();

    /** One application of the directory: whether everything is in the server (nothing to try again), and what it refused. */
    record Outcome(boolean complete, List<String> rejected, Map<String, JsonObject> pods) {}

    ManifestApplier(ApiClient admin, List<String> nodes) {
        this.admin = admin;
        this.placement = new PodPlacement(nodes);
    }

    Outcome apply(Path dir) throws IOException {
        List<String> rejected = new ArrayList<>();
        Map<String, JsonObject> wanted = new LinkedHashMap<>();
        for (Manifests.RawFile file : Manifests.raw(dir)) {
            List<JsonObject> objects = file.objects();
            Path onDisk = dir.resolve(file.origin().substring(file.origin().lastIndexOf('/') + 1));
            if (objects.isEmpty() && file.problems().isEmpty() && java.nio.file.Files.size(onDisk) == 0) {
                // Zero bytes: a file being written (truncated, not yet filled), not one emptied on purpose.
                objects = lastGood.getOrDefault(file.origin(), objects);
            } else if (!file.problems().isEmpty()) {
                rejected.addAll(file.problems());
                objects = lastGood.getOrDefault(file.origin(), objects);
            } else {
                lastGood.put(file.origin(), objects);
            }
            for (JsonObject o : objects) {
                String problem = normalize(o);
                if (problem != null) {
                    rejected.add(file.origin() + ": " + problem);
                } else {
                    wanted.put(key(o), o);
                }
            }
        }
        lastGood.keySet().retainAll(Manifests.raw(dir).stream().map(Manifests.RawFile::origin).toList());
        // A namespace the directory uses without declaring it is made (bare), as the sandbox always did:
        // an API server would refuse the objects in it.
        for (JsonObject o : new ArrayList<>(wanted.values())) {
            String ns = namespace(o);
            if (!ns.isEmpty() && !wanted.containsKey("Namespace//" + ns)) {
                JsonObject implicit = JsonParser.parseString("{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {}}").getAsJsonObject();
                implicit.getAsJsonObject("metadata").addProperty("name", ns);
                wanted.put(key(implicit), implicit);
            }
        }
        boolean complete = true;
        for (String kind : ORDER) {
            for (Map.Entry<String, JsonObject> e : wanted.entrySet()) {
                // Every object, every time: what the server holds may have moved without us (a namespace we
                // deleted takes its pods along), and an apply of what is there already changes nothing.
                if (!kind(e.getValue()).equals(kind)) {
                    continue;
                }
                complete &= applyOne(e.getKey(), e.getValue(), rejected);
            }
        }
        List<String> gone = new ArrayList<>(applied.keySet());
        gone.removeAll(wanted.keySet());
        java.util.Collections.reverse(gone); // policies before pods before namespaces
        for (String key : gone) {
            if (delete(applied.get(key))) {
                applied.remove(key);
            } else {
                complete = false;
            }
        }
        Map<String, JsonObject> pods = new LinkedHashMap<>();
        wanted.forEach((k, o) -> {
            if (kind(o).equals("Pod")) {
                pods.put(namespace(o) + "/" + name(o), o);
            }
        });
        placement.retain(pods.keySet());
        return new Outcome(complete, rejected, pods);
    }

    /** True once the object is in the server as written, or refused for good (then reported). */
    private boolean applyOne(String key, JsonObject object, List<String> rejected) throws IOException {
        JsonObject body = object.deepCopy();
        body.remove("status"); // the server keeps status for the kubelet's own writes
        Answer a = send("PATCH", path(object) + "?fieldManager=npm-agent-sandbox&force=true", body.toString());
        if (a.ok()) {
            applied.put(key, object);
            return true;
        }
        if (kind(object).equals("Pod") && a.code() == 422 && a.message().contains("pod updates may not change")) {
            // Immutable parts changed (ports, containers): replaced, as a controller would replace the pod.
            LOG.log(System.Logger.Level.INFO, "{0}: the server will not update it in place; deleting it to create it anew", key);
            delete(object);
            applied.remove(key);
            return false;
        }
        if (retryable(a)) {
            return false;
        }
        rejected.add(kind(object) + " " + (namespace(object).isEmpty() ? "" : namespace(object) + "/") + name(object)
                + ": the API server refused it: " + ApiSyntax.escapeControls(a.message()));
        applied.put(key, object); // refused as it stands: not tried again until the manifest changes
        return true;
    }

    private boolean delete(JsonObject object) throws IOException {
        String query = kind(object).equals("Pod") ? "?gracePeriodSeconds=0" : "";
        Answer a = send("DELETE", path(object) + query, kind(object).equals("Pod") ? "{\"gracePeriodSeconds\": 0}" : null);
        return a.ok() || a.code() == 404;
    }

    private static boolean retryable(Answer a) {
        return a.code() == 0 || a.code() >= 500 || a.code() == 409 || a.code() == 429
                || (a.code() == 403 && a.message().contains("serviceaccount")) // a new namespace's ServiceAccount is on its way
                || (a.code() == 404 && a.message().contains("namespaces")) // its namespace is being made
                || (a.code() == 403 && a.message().contains("being terminated"));
    }

    /** Fills in what the sandbox decides (namespace, node, image); null, or why the object cannot be applied. */
    private String normalize(JsonObject o) {
        String kind = kind(o);
        if (!ORDER.contains(kind)) {
            return "kind " + ApiSyntax.quote(kind) + " is not one the sandbox applies (" + String.join(", ", ORDER) + ")";
        }
        if (!o.has("metadata") || !o.get("metadata").isJsonObject() || name(o).isEmpty()) {
            return kind + " without metadata.name";
        }
        JsonObject meta = o.getAsJsonObject("metadata");
        for (String f : List.of("resourceVersion", "uid", "creationTimestamp", "managedFields", "generation", "selfLink")) {
            meta.remove(f);
        }
        if (CLUSTER_SCOPED.contains(kind)) {
            meta.remove("namespace"); // as the API server ignores it
        } else if (namespace(o).isEmpty()) {
            meta.addProperty("namespace", "default");
        }
        if (kind.equals("Pod")) {
            JsonObject spec = o.has("spec") && o.get("spec").isJsonObject() ? o.getAsJsonObject("spec") : new JsonObject();
            o.add("spec", spec);
            String pod = namespace(o) + "/" + name(o);
            String named = spec.has("nodeName") && spec.get("nodeName").isJsonPrimitive() ? spec.get("nodeName").getAsString() : null;
            if (!placement.placed(pod)) {
                String existing = serverNode(o);
                if (existing != null) {
                    placement.adopt(pod, named, existing);
                }
            }
            spec.addProperty("nodeName", placement.place(pod, named));
            if (spec.has("containers") && spec.get("containers").isJsonArray()) {
                for (JsonElement c : spec.getAsJsonArray("containers")) {
                    if (c.isJsonObject() && !c.getAsJsonObject().has("image")) {
                        c.getAsJsonObject().addProperty("image", IMAGE);
                    }
                }
            } else if (!spec.has("containers")) {
                JsonArray containers = new JsonArray();
                JsonObject c = new JsonObject();
                c.addProperty("name", "main");
                c.addProperty("image", IMAGE);
                containers.add(c);
                spec.add("containers", containers);
            }
        }
        return null;
    }

    /** The node the API server has the pod on, or null (no such pod yet, or no answer: then it is placed anew). */
    private String serverNode(JsonObject pod) {
        Request request = new Request.Builder().url(admin.getBasePath() + path(pod)).get().build();
        try (Response r = admin.getHttpClient().newCall(request).execute()) {
            if (!r.isSuccessful() || r.body() == null) {
                return null;
            }
            JsonObject spec = JsonParser.parseString(r.body().string()).getAsJsonObject().getAsJsonObject("spec");
            return spec != null && spec.has("nodeName") && spec.get("nodeName").isJsonPrimitive() ? spec.get("nodeName").getAsString() : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static String path(JsonObject o) {
        String ns = enc(namespace(o));
        String name = enc(name(o));
        return switch (kind(o)) {
            case "Namespace" -> "/api/v1/namespaces/" + name;
            case "Service" -> "/api/v1/namespaces/" + ns + "/services/" + name;
            case "Pod" -> "/api/v1/namespaces/" + ns + "/pods/" + name;
            case "NetworkPolicy" -> "/apis/networking.k8s.io/v1/namespaces/" + ns + "/networkpolicies/" + name;
            case "ClusterNetworkPolicy" -> "/apis/policy.networking.k8s.io/v1beta1/clusternetworkpolicies/" + name;
            default -> throw new IllegalArgumentException(kind(o));
        };
    }

    private record Answer(int code, String message) {
        boolean ok() {
            return code >= 200 && code < 300;
        }
    }

    private Answer send(String method, String path, String body) {
        RequestBody content = body == null ? null : RequestBody.create(body, method.equals("PATCH") ? APPLY : MediaType.get("application/json"));
        Request request = new Request.Builder().url(admin.getBasePath() + path).method(method, content).build();
        try (Response r = admin.getHttpClient().newCall(request).execute()) {
            String text = r.body() == null ? "" : r.body().string();
            if (r.isSuccessful()) {
                return new Answer(r.code(), "");
            }
            String message = text;
            try {
                message = JsonParser.parseString(text).getAsJsonObject().get("message").getAsString();
            } catch (RuntimeException notStatus) {
                // the body as it is
            }
            return new Answer(r.code(), message);
        } catch (IOException e) {
            return new Answer(0, e.getMessage());
        }
    }

    static String kind(JsonObject o) {
        return o.has("kind") && o.get("kind").isJsonPrimitive() ? o.get("kind").getAsString() : "";
    }

    static String name(JsonObject o) {
        JsonObject m = o.has("metadata") && o.get("metadata").isJsonObject() ? o.getAsJsonObject("metadata") : new JsonObject();
        return m.has("name") && m.get("name").isJsonPrimitive() ? m.get("name").getAsString() : "";
    }

    static String namespace(JsonObject o) {
        JsonObject m = o.has("metadata") && o.get("metadata").isJsonObject() ? o.getAsJsonObject("metadata") : new JsonObject();
        return m.has("namespace") && m.get("namespace").isJsonPrimitive() ? m.get("namespace").getAsString() : "";
    }

    private static String key(JsonObject o) {
        return kind(o) + "/" + namespace(o) + "/" + name(o);
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
