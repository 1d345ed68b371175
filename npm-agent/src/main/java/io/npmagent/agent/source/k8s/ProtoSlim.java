package io.npmagent.agent.source.k8s;

import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.V1;

/**
 * A pod in protobuf cut down to what {@link SlimObjects#fields} keeps, still in protobuf: what a feed of
 * pods sends on, encoded once for every agent it serves, and read by them as {@link PodWatchList#pod}
 * reads the API server's. The model's pod of a slim one equals the model's pod of the original
 * ({@code ProtoSlimTest}).
 */
public final class ProtoSlim {
    private ProtoSlim() {}

    public static V1.Pod pod(V1.Pod pod) {
        Meta.ObjectMeta m = pod.getMetadata();
        Meta.ObjectMeta.Builder meta = Meta.ObjectMeta.newBuilder();
        if (m.hasNamespace()) {
            meta.setNamespace(m.getNamespace());
        }
        if (m.hasName()) {
            meta.setName(m.getName());
        }
        if (m.hasResourceVersion()) {
            meta.setResourceVersion(m.getResourceVersion());
        }
        meta.putAllLabels(m.getLabelsMap());
        for (String key : SlimObjects.KEPT_ANNOTATIONS) {
            String value = m.getAnnotationsOrDefault(key, null);
            if (value != null) {
                meta.putAnnotations(key, value);
            }
        }
        V1.Pod.Builder out = V1.Pod.newBuilder().setMetadata(meta);
        if (pod.hasSpec()) {
            V1.PodSpec s = pod.getSpec();
            V1.PodSpec.Builder spec = V1.PodSpec.newBuilder();
            if (s.hasNodeName()) {
                spec.setNodeName(s.getNodeName());
            }
            if (s.hasHostNetwork()) {
                spec.setHostNetwork(s.getHostNetwork());
            }
            s.getContainersList().forEach(c -> spec.addContainers(container(c, false)));
            s.getInitContainersList().forEach(c -> spec.addInitContainers(container(c, true)));
            out.setSpec(spec);
        }
        if (pod.hasStatus()) {
            V1.PodStatus s = pod.getStatus();
            V1.PodStatus.Builder status = V1.PodStatus.newBuilder();
            if (s.hasPhase()) {
                status.setPhase(s.getPhase());
            }
            if (s.hasPodIP()) {
                status.setPodIP(s.getPodIP());
            }
            s.getPodIPsList().forEach(ip -> status.addPodIPs(V1.PodIP.newBuilder().setIp(ip.getIp())));
            out.setStatus(status);
        }
        return out.build();
    }

    /** A container's name and ports; an init container's restart policy too (a sidecar's ports count). */
    private static V1.Container container(V1.Container c, boolean init) {
        V1.Container.Builder out = V1.Container.newBuilder().setName(c.getName());
        if (init && c.hasRestartPolicy()) {
            out.setRestartPolicy(c.getRestartPolicy());
        }
        for (V1.ContainerPort p : c.getPortsList()) {
            V1.ContainerPort.Builder port = V1.ContainerPort.newBuilder().setContainerPort(p.getContainerPort());
            if (p.hasName()) {
                port.setName(p.getName());
            }
            if (p.hasProtocol()) {
                port.setProtocol(p.getProtocol());
            }
            out.addPorts(port);
        }
        return out.build();
    }
}
