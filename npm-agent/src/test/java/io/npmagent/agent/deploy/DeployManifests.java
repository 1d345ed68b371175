package io.npmagent.agent.deploy;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1ClusterRoleBinding;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1DaemonSet;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.util.Yaml;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The deployment manifests of {@code npm-agent/deploy/}, parsed: every Kubernetes object as client-java's
 * typed model (a field the model does not have is an error, as with {@code kubectl --validate=strict}),
 * the Prometheus Operator's objects (CRDs, no typed model) as maps, the Grafana dashboard as JSON. A key
 * given twice in one YAML mapping is an error too. Each call parses afresh, so callers may change what
 * they get.
 *
 * <p>For tests that hold the manifests against the code: {@link #clusterRole()} is what the agent may
 * call, {@link #daemonSet()} how it is started.
 */
public final class DeployManifests {
    public static final String DAEMONSET = "daemonset.yaml";
    public static final String RBAC = "rbac.yaml";
    public static final String CONFIGMAP = "configmap.yaml";
    public static final String PROMETHEUS_RULE = "monitoring/prometheusrule.yaml";
    public static final String POD_MONITOR = "monitoring/podmonitor.yaml";
    public static final String DASHBOARD = "grafana/dashboard.json";
    /** The Kubernetes manifests {@code kubectl apply -f npm-agent/deploy/} applies. */
    public static final List<String> CORE_MANIFESTS = List.of(RBAC, CONFIGMAP, DAEMONSET);
    /** Where the DaemonSet mounts the node's /sys/fs/cgroup, and the ConfigMap's CgroupRoot. */
    public static final String CGROUP_MOUNT = "/host/sys/fs/cgroup";

    private DeployManifests() {}

    /** {@code npm-agent/deploy}, from a module's directory (where Maven runs tests, at any depth) or the repository's. */
    public static Path dir() {
        for (Path at = Path.of("").toAbsolutePath(); at != null; at = at.getParent()) {
            Path candidate = at.resolve("npm-agent").resolve("deploy");
            if (Files.isRegularFile(candidate.resolve(DAEMONSET))) {
                return candidate.normalize();
            }
        }
        throw new IllegalStateException("npm-agent/deploy not found from " + Path.of("").toAbsolutePath());
    }

    /** The repository's root, which the image build's paths are relative to. */
    public static Path repositoryRoot() {
        return dir().getParent().getParent();
    }

    public static String text(String file) {
        try {
            return Files.readString(dir().resolve(file), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every object of a YAML manifest file, typed (V1DaemonSet, V1ConfigMap, ...), in file order. */
    public static List<Object> objects(String file) {
        String yaml = text(file);
        List<Map<String, Object>> plain = plainDocuments(yaml, file);
        List<Object> typed;
        try {
            typed = Yaml.loadAll(yaml);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
        typed.removeIf(o -> o == null);
        if (typed.size() != plain.size()) {
            throw new IllegalArgumentException(file + ": " + plain.size() + " documents, " + typed.size() + " objects");
        }
        return typed;
    }

    /** The documents of a YAML text as plain maps, with duplicate keys and non-mapping documents rejected. */
    public static List<Map<String, Object>> plainDocuments(String yaml, String where) {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        org.yaml.snakeyaml.Yaml snake = new org.yaml.snakeyaml.Yaml(new SafeConstructor(options));
        List<Map<String, Object>> out = new ArrayList<>();
        try {
            for (Object doc : snake.loadAll(yaml)) {
                if (doc == null) {
                    continue;
                }
                if (!(doc instanceof Map<?, ?> map)) {
                    throw new IllegalArgumentException(where + ": a document is not a mapping: " + doc);
                }
                @SuppressWarnings("unchecked")
                Map<String, Object> m = (Map<String, Object>) map;
                out.add(m);
            }
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
        }
        return out;
    }

    /** The one object of {@code type} in {@code file}. */
    public static <T> T one(String file, Class<T> type) {
        List<T> found = objects(file).stream().filter(type::isInstance).map(type::cast).toList();
        if (found.size() != 1) {
            throw new IllegalStateException(file + ": " + found.size() + " objects of type " + type.getSimpleName() + ", expected one");
        }
        return found.get(0);
    }

    public static V1DaemonSet daemonSet() {
        return one(DAEMONSET, V1DaemonSet.class);
    }

    /** The DaemonSet's one container: the agent. */
    public static V1Container agentContainer() {
        List<V1Container> containers = daemonSet().getSpec().getTemplate().getSpec().getContainers();
        if (containers.size() != 1) {
            throw new IllegalStateException(DAEMONSET + ": " + containers.size() + " containers, expected the agent alone");
        }
        return containers.get(0);
    }

    public static V1ServiceAccount serviceAccount() {
        return one(RBAC, V1ServiceAccount.class);
    }

    public static V1ClusterRole clusterRole() {
        return one(RBAC, V1ClusterRole.class);
    }

    public static V1ClusterRoleBinding clusterRoleBinding() {
        return one(RBAC, V1ClusterRoleBinding.class);
    }

    public static V1ConfigMap configMap() {
        return one(CONFIGMAP, V1ConfigMap.class);
    }

    /** The agent's configuration file, as the ConfigMap carries it (the key the DaemonSet's --config names). */
    public static String configFile() {
        return configMap().getData().get("npm-agent.json");
    }

    /** The PrometheusRule (a CRD: a map). */
    public static Map<String, Object> prometheusRule() {
        return single(PROMETHEUS_RULE);
    }

    /** The PodMonitor (a CRD: a map). */
    public static Map<String, Object> podMonitor() {
        return single(POD_MONITOR);
    }

    private static Map<String, Object> single(String file) {
        List<Map<String, Object>> docs = plainDocuments(text(file), file);
        if (docs.size() != 1) {
            throw new IllegalStateException(file + ": " + docs.size() + " documents, expected one");
        }
        return docs.get(0);
    }

    /** The Grafana dashboard, parsed strictly (no comments, no trailing commas, no unquoted names). */
    public static JsonObject dashboard() {
        try (JsonReader reader = new JsonReader(new StringReader(text(DASHBOARD)))) {
            reader.setStrictness(Strictness.STRICT);
            JsonElement e = new com.google.gson.Gson().getAdapter(JsonElement.class).read(reader);
            if (reader.peek() != com.google.gson.stream.JsonToken.END_DOCUMENT) {
                throw new IllegalArgumentException(DASHBOARD + ": content after the dashboard");
            }
            return e.getAsJsonObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code npm-agent/image/build}, the script that builds the image the DaemonSet runs. */
    public static Path imageBuildScript() {
        return dir().getParent().resolve("image").resolve("build");
    }

    /** The image build script's declarations (entrypoint, cmd, packages, copies, PATH). */
    public static ImageBuild imageBuild() {
        try {
            return ImageBuild.parse(Files.readString(imageBuildScript(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
