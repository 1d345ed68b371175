package io.npmagent.harness.sandbox;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodCondition;
import io.kubernetes.client.openapi.models.V1PodIP;
import io.kubernetes.client.openapi.models.V1PodStatus;
import io.kubernetes.client.openapi.models.V1HostIP;
import io.npmagent.agent.source.k8s.KubeObjects;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import java.io.IOException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The sandbox's kubelet and CNI for every one of its nodes: for each pod the API server puts on one of
 * them, an address (the manifest's {@code status.podIPs} or {@code status.podIP} when it declares one, else
 * one from {@link AddressAssigner}, unique across the nodes; its node's for host-network pods), the pod
 * built on its node ({@link PodPlumbing}:
 * namespace, veth, routes, servers), then the status kubelet would write through the status subresource
 * ({@code phase} as the manifest says, else Running, {@code podIPs}, {@code hostIPs}, Ready conditions). A pod being deleted is confirmed with a zero grace period, as kubelet does once its
 * containers stopped.
 */
final class Kubelet {
    private static final System.Logger LOG = System.getLogger(Kubelet.class.getName());

    private final CoreV1Api api;
    private final Map<String, SandboxNode> nodes = new TreeMap<>();
    private final PodPlumbing plumbing;
    private final AddressAssigner addresses = new AddressAssigner();

    Kubelet(ApiClient admin, List<SandboxNode> nodes, PodPlumbing plumbing) {
        this.api = new CoreV1Api(admin);
        nodes.forEach(n -> this.nodes.put(n.name(), n));
        this.plumbing = plumbing;
    }

    /**
     * One pass over the nodes' pods; true when it wrote nothing to the API server, i.e. every pod the
     * server shows on a node of the sandbox is built as the server shows it.
     *
     * @param manifests the directory's pods by {@code namespace/name}, for the addresses and phase they declare
     */
    boolean sync(Map<String, JsonObject> manifests) throws IOException {
        List<V1Pod> pods;
        try {
            pods = api.listPodForAllNamespaces().execute().getItems();
        } catch (ApiException e) {
            throw new IOException("cannot list the node's pods: HTTP " + e.getCode() + " " + e.getResponseBody(), e);
        }
        // Every pod's address is taken, on whichever node; then only the sandbox's nodes' pods are built.
        Set<IpAddress> taken = new HashSet<>();
        manifests.values().forEach(m -> taken.addAll(declaredIps(m)));
        pods.forEach(p -> {
            if (p.getStatus() != null && p.getStatus().getPodIPs() != null) {
                p.getStatus().getPodIPs().forEach(ip -> taken.add(IpAddress.parse(ip.getIp())));
            }
        });
        pods = pods.stream().filter(p -> p.getSpec() != null && nodes.containsKey(p.getSpec().getNodeName())).toList();
        boolean quiet = true;
        TreeMap<PodKey, Pod> built = new TreeMap<>();
        Set<PodKey> live = new HashSet<>();
        List<V1Pod> starting = new ArrayList<>();
        for (V1Pod p : pods) {
            String ns = p.getMetadata().getNamespace();
            String name = p.getMetadata().getName();
            PodKey key = new PodKey(ns, name);
            live.add(key);
            try {
                if (p.getMetadata().getDeletionTimestamp() != null) {
                    api.deleteNamespacedPod(name, ns).gracePeriodSeconds(0).execute();
                    quiet = false;
                    continue;
                }
                if (p.getStatus() == null || p.getStatus().getPodIPs() == null || p.getStatus().getPodIPs().isEmpty()) {
                    p.setStatus(status(p, key, manifests.get(ns + "/" + name), taken));
                    starting.add(p);
                    quiet = false;
                }
                built.put(key, KubeObjects.pod(p, new FieldErrors(new ObjectRef("Pod", ns, name))));
            } catch (ApiException e) {
                if (e.getCode() != 404 && e.getCode() != 409) { // gone, or changed meanwhile: the next pass sees it
                    LOG.log(System.Logger.Level.WARNING, "pod {0}: HTTP {1} {2}", key, e.getCode(), e.getResponseBody());
                }
                quiet = false;
            }
        }
        addresses.retain(live);
        // Built first, then the status with its addresses, as kubelet reports a pod's IPs only after the CNI
        // made its interface: the agent never sees an address whose interface is not there yet.
        plumbing.reconcile(new ClusterState(new TreeMap<>(), built, new TreeMap<>()));
        for (V1Pod p : starting) {
            String ns = p.getMetadata().getNamespace();
            String name = p.getMetadata().getName();
            try {
                api.replaceNamespacedPodStatus(name, ns, p).execute();
                LOG.log(System.Logger.Level.INFO, "pod {0}/{1}: {2} {3}", ns, name, p.getStatus().getPhase(), p.getStatus().getPodIPs());
            } catch (ApiException e) {
                if (e.getCode() != 404 && e.getCode() != 409) { // gone, or changed meanwhile: the next pass sees it
                    LOG.log(System.Logger.Level.WARNING, "pod {0}/{1}: HTTP {2} {3}", ns, name, e.getCode(), e.getResponseBody());
                }
            }
        }
        return quiet;
    }

    private V1PodStatus status(V1Pod pod, PodKey key, JsonObject manifest, Set<IpAddress> taken) {
        List<String> nodeIps = nodes.get(pod.getSpec().getNodeName()).ips();
        List<IpAddress> ips;
        boolean hostNetwork = pod.getSpec() != null && Boolean.TRUE.equals(pod.getSpec().getHostNetwork());
        if (hostNetwork) {
            ips = nodeIps.stream().map(IpAddress::parse).toList();
        } else {
            ips = manifest == null ? List.of() : declaredIps(manifest);
            if (ips.isEmpty()) {
                ips = addresses.forPod(key, taken);
                taken.addAll(ips);
            }
        }
        String phase = manifest == null ? null : text(manifest.getAsJsonObject("status"), "phase");
        OffsetDateTime now = OffsetDateTime.now();
        V1PodStatus s = new V1PodStatus().phase(phase == null ? "Running" : phase).startTime(now)
                .hostIP(nodeIps.get(0)).hostIPs(nodeIps.stream().map(ip -> new V1HostIP().ip(ip)).toList())
                .podIP(ips.get(0).toString()).podIPs(ips.stream().map(ip -> new V1PodIP().ip(ip.toString())).toList());
        for (String type : List.of("PodScheduled", "Initialized", "ContainersReady", "Ready")) {
            s.addConditionsItem(new V1PodCondition().type(type).status("True").lastTransitionTime(now));
        }
        if (pod.getSpec() != null && pod.getSpec().getContainers() != null) {
            for (var c : pod.getSpec().getContainers()) {
                s.addContainerStatusesItem(new io.kubernetes.client.openapi.models.V1ContainerStatus().name(c.getName()).image(c.getImage())
                        .imageID("").ready(true).started(true).restartCount(0)
                        .state(new io.kubernetes.client.openapi.models.V1ContainerState()
                                .running(new io.kubernetes.client.openapi.models.V1ContainerStateRunning().startedAt(now))));
            }
        }
        return s;
    }

    /** The addresses a pod manifest declares in {@code status.podIPs} (or {@code status.podIP}), in order. */
    static List<IpAddress> declaredIps(JsonObject manifest) {
        List<IpAddress> out = new ArrayList<>();
        JsonObject status = manifest.has("status") && manifest.get("status").isJsonObject() ? manifest.getAsJsonObject("status") : null;
        if (status == null) {
            return out;
        }
        if (status.has("podIPs") && status.get("podIPs").isJsonArray()) {
            for (JsonElement e : status.getAsJsonArray("podIPs")) {
                String ip = e.isJsonObject() ? text(e.getAsJsonObject(), "ip") : null;
                if (ip != null) {
                    out.add(IpAddress.parse(ip));
                }
            }
        }
        String single = text(status, "podIP");
        if (out.isEmpty() && single != null) {
            out.add(IpAddress.parse(single));
        }
        return out;
    }

    private static String text(JsonObject o, String field) {
        return o != null && o.has(field) && o.get(field).isJsonPrimitive() ? o.get(field).getAsString() : null;
    }
}
