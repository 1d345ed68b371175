package io.npmagent.harness.cluster;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * npm-agent as an operator deploys it: its image built ({@code npm-agent/image/build}) and imported into
 * every node, {@code npm-agent/deploy/} applied unchanged, the ConfigMap's {@code Backend} set, then a new
 * pod ({@code kubectl rollout restart}, as for any key that is not hot), Ready.
 */
public final class Agent implements Step.ClusterAction {
    public static final String REPOSITORY = "registry.example/npm-agent";
    private static final String CONFIG_MAP = "npm-agent-config";
    private static final String CONFIG_KEY = "npm-agent.json";

    private final String backend;

    public Agent(String backend) {
        this.backend = backend;
    }

    @Override
    public void up(Cluster c) throws Exception {
        loadImage(c);
        c.kubectl("apply", "-f", c.checkout().resolve("npm-agent/deploy").toString());
        configure(c, "Backend", "\"" + backend + "\"");
        c.kubectl("-n", "kube-system", "rollout", "restart", "daemonset/npm-agent");
        c.awaitKubectl(Duration.ofSeconds(180), "the npm-agent DaemonSet's pod Ready",
                "-n", "kube-system", "rollout", "status", "daemonset/npm-agent", "--timeout=2s");
    }

    /** The agent's image built from this checkout ({@code npm-agent/image/build}) and imported into every node's containerd. */
    public static void loadImage(Cluster c) throws Exception {
        String out = c.must(Duration.ofMinutes(20), List.of(c.checkout().resolve("npm-agent/image/build").toString())).stdout().strip();
        Path archive = Path.of(out.substring(out.lastIndexOf('\n') + 1));
        for (Node node : c.nodes()) {
            Images.load(c, node, archive, REPOSITORY);
        }
    }

    /**
     * Sets one key of the agent's ConfigMap ({@code Toggles.NetPolInBackground}: a dotted path; {@code json}
     * is the value as JSON). The agent applies hot keys from the mounted file; the others need a new pod.
     */
    public static void configure(Cluster c, String key, String json) {
        String current = c.kubectl("-n", "kube-system", "get", "configmap", CONFIG_MAP, "-o", "jsonpath={.data.npm-agent\\.json}");
        JsonObject patch = new JsonObject();
        JsonObject data = new JsonObject();
        data.addProperty(CONFIG_KEY, withKey(current, key, json));
        patch.add("data", data);
        c.kubectl("-n", "kube-system", "patch", "configmap", CONFIG_MAP, "--type", "merge", "-p", patch.toString());
    }

    /** {@code config} (JSON) with the dotted {@code key} set to {@code json}, pretty-printed as the shipped file is. */
    static String withKey(String config, String key, String json) {
        JsonObject root = JsonParser.parseString(config).getAsJsonObject();
        String[] parts = key.split("\\.");
        JsonObject target = root;
        for (int i = 0; i < parts.length - 1; i++) {
            if (!target.has(parts[i]) || !target.get(parts[i]).isJsonObject()) {
                target.add(parts[i], new JsonObject());
            }
            target = target.getAsJsonObject(parts[i]);
        }
        target.add(parts[parts.length - 1], JsonParser.parseString(json));
        return new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create().toJson(root) + "\n";
    }
}
