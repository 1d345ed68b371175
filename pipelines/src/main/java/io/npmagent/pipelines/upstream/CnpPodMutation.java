package io.npmagent.pipelines.upstream;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@link CnpWebhook} changes in a pod of network-policy-api's conformance suite, as a function of the pod
 * alone: a JSON Patch (RFC 6902) and a line per change for the run's record. Two kinds of container, nothing else:
 * <ul>
 * <li>a container whose only server is SCTP ({@code agnhost porter} with {@code SERVE_SCTP_PORT_*} and no other
 * {@code SERVE_*} variable): this kernel has no SCTP sockets, so porter exits at once and the pod is never Ready,
 * which fails the suite's setup. Its command becomes {@code /agnhost pause} (same name, same image, no server);
 * the suite's SCTP probes then find nothing to talk to, and the report counts them as not run.</li>
 * <li>a container of the agnhost image with neither {@code command} nor {@code args}: upstream's image runs its
 * {@code CMD ["pause"]}; the cluster's image (built from the same module, {@code Images}) has no CMD, and
 * {@code /agnhost} alone prints its help and exits. It gets {@code args: ["pause"]}: what upstream's image runs.</li>
 * </ul>
 * Every other container, and every other field, is left as the suite wrote it.
 */
final class CnpPodMutation {
    /** The repository of the suite's image (its tag differs: the nodes carry ours under the suite's tag too). */
    static final String AGNHOST = "registry.k8s.io/e2e-test-images/agnhost";
    static final List<String> PAUSE_COMMAND = List.of("/agnhost", "pause");

    private CnpPodMutation() {}

    /** The patch for {@code pod} (a v1 Pod as JSON) and what it changes; an empty patch: nothing to change. */
    static Result of(JsonObject pod) {
        List<JsonObject> patch = new ArrayList<>();
        List<String> changes = new ArrayList<>();
        JsonObject spec = pod.has("spec") && pod.get("spec").isJsonObject() ? pod.getAsJsonObject("spec") : new JsonObject();
        JsonArray containers = spec.has("containers") && spec.get("containers").isJsonArray() ? spec.getAsJsonArray("containers") : new JsonArray();
        String podName = name(pod);
        for (int i = 0; i < containers.size(); i++) {
            if (!containers.get(i).isJsonObject()) {
                continue;
            }
            JsonObject c = containers.get(i).getAsJsonObject();
            String where = "/spec/containers/" + i;
            String cname = c.has("name") ? c.get("name").getAsString() : "#" + i;
            if (sctpOnlyPorter(c)) {
                patch.add(op(c.has("command") ? "replace" : "add", where + "/command", strings(PAUSE_COMMAND)));
                if (c.has("args")) {
                    patch.add(remove(where + "/args"));
                }
                changes.add(podName + " container " + cname + ": " + words(c) + " -> " + String.join(" ", PAUSE_COMMAND)
                        + " (its only server is SCTP: " + String.join(", ", serveVariables(c)) + ")");
            } else if (isAgnhost(c) && !c.has("command") && !c.has("args")) {
                patch.add(op("add", where + "/args", strings(List.of("pause"))));
                changes.add(podName + " container " + cname + ": no command -> args [pause] (upstream's image CMD; ours has none)");
            }
        }
        return new Result(List.copyOf(patch), List.copyOf(changes));
    }

    /** A patch and its changes, one line each. */
    record Result(List<JsonObject> patch, List<String> changes) {
        JsonArray patchJson() {
            JsonArray a = new JsonArray();
            patch.forEach(a::add);
            return a;
        }
    }

    /** agnhost porter serving SCTP alone: every SERVE_* variable it has names an SCTP port, and it has one. */
    static boolean sctpOnlyPorter(JsonObject c) {
        if (!words(c).matches("(?s).*\\bporter\\b.*")) {
            return false;
        }
        List<String> serve = serveVariables(c);
        return !serve.isEmpty() && serve.stream().allMatch(n -> n.startsWith("SERVE_SCTP_PORT_"));
    }

    private static List<String> serveVariables(JsonObject c) {
        List<String> out = new ArrayList<>();
        if (c.has("env") && c.get("env").isJsonArray()) {
            for (JsonElement e : c.getAsJsonArray("env")) {
                if (e.isJsonObject() && e.getAsJsonObject().has("name")) {
                    String n = e.getAsJsonObject().get("name").getAsString();
                    if (n.startsWith("SERVE_")) {
                        out.add(n);
                    }
                }
            }
        }
        return out;
    }

    private static boolean isAgnhost(JsonObject c) {
        if (!c.has("image")) {
            return false;
        }
        String image = c.get("image").getAsString();
        return image.equals(AGNHOST) || image.startsWith(AGNHOST + ":") || image.startsWith(AGNHOST + "@");
    }

    /** command and args, space-joined. */
    private static String words(JsonObject c) {
        List<String> w = new ArrayList<>();
        for (String key : List.of("command", "args")) {
            if (c.has(key) && c.get(key).isJsonArray()) {
                c.getAsJsonArray(key).forEach(e -> w.add(e.getAsString()));
            }
        }
        return String.join(" ", w);
    }

    private static String name(JsonObject pod) {
        JsonObject meta = pod.has("metadata") ? pod.getAsJsonObject("metadata") : new JsonObject();
        String ns = meta.has("namespace") ? meta.get("namespace").getAsString() : "?";
        // A StatefulSet's pod is named by the time admission sees it; generateName covers the others.
        String n = meta.has("name") ? meta.get("name").getAsString() : meta.has("generateName") ? meta.get("generateName").getAsString() + "*" : "?";
        return ns + "/" + n;
    }

    private static JsonObject op(String op, String path, JsonElement value) {
        JsonObject o = new JsonObject();
        o.addProperty("op", op);
        o.addProperty("path", path);
        o.add("value", value);
        return o;
    }

    private static JsonObject remove(String path) {
        JsonObject o = new JsonObject();
        o.addProperty("op", "remove");
        o.addProperty("path", path);
        return o;
    }

    private static JsonArray strings(List<String> values) {
        JsonArray a = new JsonArray();
        values.forEach(v -> a.add(new JsonPrimitive(v)));
        return a;
    }
}
