package io.npmagent.agent.source.k8s;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.V1ListMeta;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesListObject;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ContainerPort;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NetworkPolicy;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeAddress;
import io.kubernetes.client.openapi.models.V1NodeStatus;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodStatus;
import io.npmagent.dataplane.bandwidth.BandwidthAnnotations;
import io.npmagent.dataplane.bandwidth.CongestionAnnotation;
import io.npmagent.dataplane.model.Direction;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Cuts an object down to what {@link KubeObjects} reads, before it enters an informer's cache: the cache
 * holds every pod of the cluster, and a pod as the API server sends it (managedFields, the last-applied
 * annotation, env, volumes, probes, conditions, container statuses) is ten to fifty times larger than
 * what enforcement needs. A pod is cut to its fields that matter (name, namespace, resourceVersion,
 * labels, the bandwidth and congestion control annotations; of its spec its node, hostNetwork and
 * each container's name and ports, init containers with their restart policy, for sidecars; of its
 * status the phase and addresses), converted to the model's pod at once and cached as a {@link CachedPod}; a namespace keeps
 * its name and labels, a policy its whole spec. {@code KubeObjects} of a slim object equals
 * {@code KubeObjects} of the original: {@code SlimObjectsTest} holds that.
 */
public final class SlimObjects {
    static final List<String> KEPT_ANNOTATIONS = List.of(BandwidthAnnotations.annotation(Direction.INGRESS),
            BandwidthAnnotations.annotation(Direction.EGRESS), CongestionAnnotation.ANNOTATION);

    private SlimObjects() {}

    /** For {@code SharedIndexInformer#setTransform}: every kind the agent watches, anything else unchanged. */
    public static KubernetesObject slim(KubernetesObject object) {
        if (object instanceof V1Pod p) {
            return pod(p);
        }
        if (object instanceof V1Namespace n) {
            return namespace(n);
        }
        if (object instanceof V1NetworkPolicy p) {
            return policy(p);
        }
        if (object instanceof V1Node n) {
            return node(n);
        }
        if (object instanceof DynamicKubernetesObject d) {
            return clusterPolicy(d);
        }
        return object;
    }

    /** The pod as the cache keeps it: its name and version, and the model's pod ({@link CachedPod}). */
    public static V1Pod pod(V1Pod pod) {
        return CachedPod.of(pod);
    }

    /** What {@link KubeObjects#pod} reads of a pod and nothing else, its repeated strings interned. */
    static V1Pod fields(V1Pod pod) {
        V1Pod out = new V1Pod().metadata(meta(pod.getMetadata(), true));
        V1PodSpec spec = pod.getSpec();
        if (spec != null) {
            V1PodSpec slim = new V1PodSpec().nodeName(intern(spec.getNodeName())).hostNetwork(spec.getHostNetwork());
            slim.setContainers(containers(spec.getContainers(), false));
            slim.setInitContainers(containers(spec.getInitContainers(), true));
            empty(slim);
            out.setSpec(slim);
        }
        V1PodStatus status = pod.getStatus();
        if (status != null) {
            V1PodStatus slim = new V1PodStatus().phase(intern(status.getPhase())).podIP(status.getPodIP()).podIPs(status.getPodIPs());
            slim.setConditions(null);
            slim.setContainerStatuses(null);
            slim.setEphemeralContainerStatuses(null);
            slim.setHostIPs(null);
            slim.setInitContainerStatuses(null);
            slim.setResourceClaimStatuses(null);
            slim.setAllocatedResources(null);
            slim.setNodeAllocatableResourceClaimStatuses(null);
            out.setStatus(slim);
        }
        return out;
    }

    public static V1Namespace namespace(V1Namespace namespace) {
        return new V1Namespace().metadata(meta(namespace.getMetadata(), false));
    }

    public static V1NetworkPolicy policy(V1NetworkPolicy policy) {
        return new V1NetworkPolicy().metadata(meta(policy.getMetadata(), false)).spec(policy.getSpec());
    }

    /**
     * Name, labels and the addresses a {@code nodes} peer admits: a node's status (conditions, images,
     * capacity) is most of it and changes every few minutes, which then changes nothing here.
     */
    public static V1Node node(V1Node node) {
        V1Node out = new V1Node().metadata(meta(node.getMetadata(), false));
        V1NodeStatus status = node.getStatus();
        if (status != null && status.getAddresses() != null) {
            V1NodeStatus slim = new V1NodeStatus();
            slim.setAddresses(status.getAddresses().stream().filter(a -> a != null && KubeObjects.NODE_ADDRESS_TYPES.contains(a.getType()))
                    .map(a -> new V1NodeAddress().type(a.getType()).address(a.getAddress())).toList());
            slim.setAllocatable(null);
            slim.setCapacity(null);
            slim.setConditions(null);
            slim.setDeclaredFeatures(null);
            slim.setImages(null);
            slim.setRuntimeHandlers(null);
            slim.setVolumesAttached(null);
            slim.setVolumesInUse(null);
            out.setStatus(slim);
        }
        return out;
    }

    /** A ClusterNetworkPolicy (client-java has no type for it): its name, version and spec; not its status or managed fields. */
    public static DynamicKubernetesObject clusterPolicy(DynamicKubernetesObject policy) {
        JsonObject raw = new JsonObject();
        raw.addProperty("apiVersion", ClusterPolicyJson.API_VERSION);
        raw.addProperty("kind", ClusterPolicyJson.KIND);
        JsonObject meta = new JsonObject();
        V1ObjectMeta m = policy.getMetadata();
        if (m != null) {
            meta.addProperty("name", m.getName());
            meta.addProperty("resourceVersion", m.getResourceVersion());
        }
        raw.add("metadata", meta);
        JsonElement spec = policy.getRaw() == null ? null : policy.getRaw().get("spec");
        if (spec != null) {
            raw.add("spec", spec);
        }
        return new DynamicKubernetesObject(raw);
    }

    /** A list of them, as the reflector takes a page: its items are read back from its JSON, so they are written there. */
    static DynamicKubernetesListObject clusterPolicyList(List<DynamicKubernetesObject> items, V1ListMeta meta) {
        JsonObject raw = new JsonObject();
        raw.addProperty("apiVersion", ClusterPolicyJson.API_VERSION);
        raw.addProperty("kind", ClusterPolicyJson.KIND + "List");
        raw.add("metadata", meta == null ? new JsonObject() : JSON.getGson().toJsonTree(meta));
        JsonArray array = new JsonArray();
        items.forEach(i -> array.add(i.getRaw()));
        raw.add("items", array);
        return new DynamicKubernetesListObject(raw);
    }

    /**
     * The annotations the agent reads (bandwidth, congestion control), of all a pod has: the model holds no others,
     * so an unrelated annotation changing is no change to the pod.
     */
    public static Map<String, String> readAnnotations(Map<String, String> annotations) {
        if (annotations == null || annotations.isEmpty()) {
            return Map.of();
        }
        Map<String, String> out = new HashMap<>(2);
        for (String key : KEPT_ANNOTATIONS) {
            if (annotations.containsKey(key)) {
                String value = annotations.get(key);
                out.put(key, value == null ? "" : value); // as the API server decodes a null: the zero value
            }
        }
        return out;
    }

    private static V1ObjectMeta meta(V1ObjectMeta meta, boolean bandwidthAnnotations) {
        if (meta == null) {
            return null;
        }
        V1ObjectMeta out = identity(meta);
        out.setLabels(labels(meta.getLabels()));
        Map<String, String> annotations = bandwidthAnnotations ? readAnnotations(meta.getAnnotations()) : Map.of();
        out.setAnnotations(annotations.isEmpty() ? null : new HashMap<>(annotations));
        return out;
    }

    /**
     * Name, namespace (interned) and resourceVersion, every other field null: the generated model starts
     * each map and list empty, and 100,000 pods need not hold them.
     */
    static V1ObjectMeta identity(V1ObjectMeta meta) {
        return identity(intern(meta.getNamespace()), meta.getName(), meta.getResourceVersion());
    }

    static V1ObjectMeta identity(String namespace, String name, String resourceVersion) {
        V1ObjectMeta out = new V1ObjectMeta().name(name).namespace(namespace).resourceVersion(resourceVersion);
        out.setLabels(null);
        out.setAnnotations(null);
        out.setFinalizers(null);
        out.setManagedFields(null);
        out.setOwnerReferences(null);
        return out;
    }

    private static List<V1Container> containers(List<V1Container> containers, boolean init) {
        if (containers == null || containers.isEmpty()) {
            return null;
        }
        List<V1Container> out = new java.util.ArrayList<>(containers.size());
        for (V1Container c : containers) {
            if (c == null) {
                out.add(null);
                continue;
            }
            V1Container slim = new V1Container().name(intern(c.getName()));
            slim.setPorts(ports(c.getPorts()));
            if (init) {
                slim.setRestartPolicy(c.getRestartPolicy());
            }
            slim.setArgs(null);
            slim.setCommand(null);
            slim.setEnv(null);
            slim.setEnvFrom(null);
            slim.setResizePolicy(null);
            slim.setRestartPolicyRules(null);
            slim.setVolumeDevices(null);
            slim.setVolumeMounts(null);
            out.add(slim);
        }
        return out;
    }

    /**
     * Label keys and values, namespace and node names, phases, port names and protocols repeat across
     * thousands of pods; the cache holds one copy of each. Labels are copied into a map of their size.
     */
    private static Map<String, String> labels(Map<String, String> labels) {
        if (labels == null || labels.isEmpty()) {
            return null;
        }
        Map<String, String> out = new HashMap<>((int) (labels.size() / 0.75f) + 1);
        labels.forEach((k, v) -> out.put(intern(k), intern(v)));
        return out;
    }

    private static List<V1ContainerPort> ports(List<V1ContainerPort> ports) {
        if (ports == null || ports.isEmpty()) {
            return null;
        }
        List<V1ContainerPort> out = new java.util.ArrayList<>(ports.size());
        for (V1ContainerPort p : ports) {
            out.add(p == null ? null
                    : new V1ContainerPort().name(intern(p.getName())).containerPort(p.getContainerPort()).protocol(intern(p.getProtocol())));
        }
        return out;
    }

    private static String intern(String s) {
        return s == null ? null : s.intern();
    }

    /** The generated model starts every list as an empty ArrayList; a cache of 100,000 pods need not hold them. */
    private static void empty(V1PodSpec spec) {
        spec.setEphemeralContainers(null);
        spec.setHostAliases(null);
        spec.setImagePullSecrets(null);
        spec.setNodeSelector(null);
        spec.setOverhead(null);
        spec.setReadinessGates(null);
        spec.setResourceClaims(null);
        spec.setSchedulingGates(null);
        spec.setTolerations(null);
        spec.setTopologySpreadConstraints(null);
        spec.setVolumes(null);
    }
}
