package io.npmagent.agent.source.k8s;

import io.kubernetes.client.custom.IntOrString;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ContainerPort;
import io.kubernetes.client.openapi.models.V1IPBlock;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1LabelSelectorRequirement;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NetworkPolicy;
import io.kubernetes.client.openapi.models.V1NetworkPolicyEgressRule;
import io.kubernetes.client.openapi.models.V1NetworkPolicyIngressRule;
import io.kubernetes.client.openapi.models.V1NetworkPolicyPeer;
import io.kubernetes.client.openapi.models.V1NetworkPolicyPort;
import io.kubernetes.client.openapi.models.V1NetworkPolicySpec;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeAddress;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodIP;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodStatus;
import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.ContainerPort;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.LabelSelector;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Node;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodPhase;
import io.npmagent.dataplane.model.Protocol;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Converts client-java objects into the dataplane model: the only place that knows both. Informer
 * handlers and the manifest loader call it; no {@code V1*} type goes further.
 *
 * <p><b>Absent versus empty.</b> client-java 27's generated models initialise every list and map field
 * to an empty {@code ArrayList}/{@code HashMap} in their constructors, and Gson deserialises by starting
 * from that constructor, so a list the object leaves out arrives here as {@code []}; only an explicit
 * JSON {@code null} arrives as {@code null}. Object fields ({@code podSelector}, {@code ipBlock}...)
 * stay null when absent. Nothing is lost: for every list read here the v1 API gives absent, null and
 * empty the same meaning ({@code policyTypes} is defaulted when its length is 0; an empty
 * {@code from}/{@code to}/{@code ports} admits everything; an empty {@code ingress} has no rules), and
 * the model accepts either. So lists are passed through as they come: null stays null, {@code []}
 * stays {@code []}.
 *
 * <p><b>Nulls inside collections.</b> YAML lets a manifest write {@code key: ~} or {@code - ~}. The API
 * server decodes such a null into the zero value of the element (Go's encoding/json), and so do we:
 * a null label value is {@code ""}, a null peer is a peer with no fields, a null rule is a rule with
 * no fields. The model's collections cannot hold nulls, and the zero value keeps the object's meaning.
 *
 * <p><b>Policies are not validated here</b>: {@code PolicyNormalizer} is the one place for that. Pods
 * are checked only where the model cannot hold the value (an unparsable IP, an unknown protocol, a port
 * out of range); that item is reported and skipped, and the rest of the pod kept, so one bad port
 * does not hide the pod from the policies that select it.
 */
public final class KubeObjects {
    private static final System.Logger LOG = System.getLogger(KubeObjects.class.getName());
    /** {@code restartPolicy: Always} on an init container makes it a sidecar: it runs, and serves, alongside the pod. */
    private static final String SIDECAR_RESTART_POLICY = "Always";

    private KubeObjects() {}

    public static Namespace namespace(V1Namespace namespace) {
        V1ObjectMeta meta = requireMeta(namespace.getMetadata(), "Namespace");
        return new Namespace(meta.getName(), strings(meta.getLabels()));
    }

    /**
     * The pod as the model holds it. Problems with single items go to {@code errors} under the field
     * path the API server would print ({@code spec.containers[0].ports[2].protocol}).
     */
    public static Pod pod(V1Pod pod, FieldErrors errors) {
        if (pod instanceof CachedPod cached) {
            return cached.model(errors); // converted as it entered the cache
        }
        V1ObjectMeta meta = requireMeta(pod.getMetadata(), "Pod");
        if (meta.getNamespace() == null) {
            throw new IllegalArgumentException("pod " + ApiSyntax.quote(meta.getName()) + " has no metadata.namespace");
        }
        V1PodSpec spec = pod.getSpec();
        V1PodStatus status = pod.getStatus();
        return Pod.builder(meta.getNamespace(), meta.getName())
                .labels(strings(meta.getLabels()))
                .annotations(strings(SlimObjects.readAnnotations(meta.getAnnotations())))
                .nodeName(spec == null ? null : spec.getNodeName())
                .hostNetwork(spec != null && Boolean.TRUE.equals(spec.getHostNetwork()))
                .phase(PodPhase.parse(status == null ? null : status.getPhase()))
                .ips(addresses(status, errors))
                .ports(ports(spec, errors))
                .build();
    }

    /** The addresses of a Node a {@code nodes} peer admits: host names are no addresses. */
    static final Set<String> NODE_ADDRESS_TYPES = Set.of("InternalIP", "ExternalIP");

    /** Its labels and addresses (InternalIP, ExternalIP); an address that does not parse is left out, and logged. */
    public static Node node(V1Node node) {
        V1ObjectMeta meta = requireMeta(node.getMetadata(), "Node");
        List<IpAddress> addresses = new ArrayList<>();
        if (node.getStatus() != null && node.getStatus().getAddresses() != null) {
            for (V1NodeAddress a : node.getStatus().getAddresses()) {
                if (a != null && NODE_ADDRESS_TYPES.contains(a.getType()) && a.getAddress() != null) {
                    try {
                        IpAddress ip = IpAddress.parse(a.getAddress());
                        if (!addresses.contains(ip)) {
                            addresses.add(ip);
                        }
                    } catch (IllegalArgumentException e) {
                        LOG.log(System.Logger.Level.WARNING, "Node {0}: status.addresses {1} {2} is no IP address, left out",
                                ApiSyntax.quote(meta.getName()), a.getType(), ApiSyntax.quote(a.getAddress()));
                    }
                }
            }
        }
        return new Node(meta.getName(), strings(meta.getLabels()), addresses);
    }

    /** The whole v1 spec as written: nothing defaulted, nothing validated. */
    public static NetworkPolicy policy(V1NetworkPolicy policy) {
        V1ObjectMeta meta = requireMeta(policy.getMetadata(), "NetworkPolicy");
        if (meta.getNamespace() == null) {
            throw new IllegalArgumentException(
                    "NetworkPolicy " + ApiSyntax.quote(meta.getName()) + " has no metadata.namespace");
        }
        V1NetworkPolicySpec spec = policy.getSpec();
        if (spec == null) {
            return new NetworkPolicy(meta.getNamespace(), meta.getName(), null, null, null, null);
        }
        return new NetworkPolicy(
                meta.getNamespace(),
                meta.getName(),
                selector(spec.getPodSelector()),
                spec.getPolicyTypes() == null ? null : strings(spec.getPolicyTypes()),
                map(spec.getIngress(), KubeObjects::ingressRule),
                map(spec.getEgress(), KubeObjects::egressRule));
    }

    /** metav1.LabelSelector as written; null stays null (the policy decides what an absent selector means). */
    public static LabelSelector selector(V1LabelSelector selector) {
        if (selector == null) {
            return null;
        }
        return new LabelSelector(
                strings(selector.getMatchLabels()),
                map(selector.getMatchExpressions(), KubeObjects::requirement));
    }

    private static LabelSelector.Requirement requirement(V1LabelSelectorRequirement r) {
        if (r == null) {
            return new LabelSelector.Requirement("", "", null);
        }
        return new LabelSelector.Requirement(
                nullToEmpty(r.getKey()),
                nullToEmpty(r.getOperator()),
                r.getValues() == null ? null : strings(r.getValues()));
    }

    private static NetworkPolicy.Rule ingressRule(V1NetworkPolicyIngressRule rule) {
        return rule == null
                ? new NetworkPolicy.Rule(null, null)
                : new NetworkPolicy.Rule(map(rule.getFrom(), KubeObjects::peer), map(rule.getPorts(), KubeObjects::port));
    }

    private static NetworkPolicy.Rule egressRule(V1NetworkPolicyEgressRule rule) {
        return rule == null
                ? new NetworkPolicy.Rule(null, null)
                : new NetworkPolicy.Rule(map(rule.getTo(), KubeObjects::peer), map(rule.getPorts(), KubeObjects::port));
    }

    private static NetworkPolicy.Peer peer(V1NetworkPolicyPeer peer) {
        if (peer == null) {
            return new NetworkPolicy.Peer(null, null, null);
        }
        V1IPBlock block = peer.getIpBlock();
        return new NetworkPolicy.Peer(
                selector(peer.getPodSelector()),
                selector(peer.getNamespaceSelector()),
                block == null ? null : new NetworkPolicy.IpBlock(block.getCidr(), strings(block.getExcept())));
    }

    private static NetworkPolicy.Port port(V1NetworkPolicyPort port) {
        if (port == null) {
            return new NetworkPolicy.Port(null, null, null);
        }
        return new NetworkPolicy.Port(port.getProtocol(), portValue(port.getPort()), port.getEndPort());
    }

    private static NetworkPolicy.PortValue portValue(IntOrString value) {
        if (value == null) {
            return null;
        }
        return value.isInteger()
                ? NetworkPolicy.PortValue.number(value.getIntValue())
                : NetworkPolicy.PortValue.name(value.getStrValue());
    }

    /**
     * status.podIPs when it has entries, else status.podIP: podIPs is the dual-stack list (its first
     * entry equals podIP), but a status written by hand or by an old component may carry only podIP.
     */
    private static List<IpAddress> addresses(V1PodStatus status, FieldErrors errors) {
        List<IpAddress> ips = new ArrayList<>();
        if (status == null) {
            return ips;
        }
        List<V1PodIP> podIPs = status.getPodIPs();
        if (podIPs != null && !podIPs.isEmpty()) {
            for (int i = 0; i < podIPs.size(); i++) {
                V1PodIP entry = podIPs.get(i);
                addAddress(ips, entry == null ? null : entry.getIp(), "status.podIPs[" + i + "].ip", errors);
            }
        } else if (status.getPodIP() != null && !status.getPodIP().isEmpty()) {
            addAddress(ips, status.getPodIP(), "status.podIP", errors);
        }
        return ips;
    }

    private static void addAddress(List<IpAddress> ips, String text, String field, FieldErrors errors) {
        try {
            ips.add(IpAddress.parse(text));
        } catch (IllegalArgumentException e) {
            errors.add(field, "invalid value " + ApiSyntax.quote(text) + ": must be a valid IP address");
        }
    }

    /** Ports of the app containers and of sidecars (init containers with restartPolicy Always). */
    private static List<ContainerPort> ports(V1PodSpec spec, FieldErrors errors) {
        List<ContainerPort> ports = new ArrayList<>();
        if (spec == null) {
            return ports;
        }
        containerPorts(spec.getContainers(), "spec.containers", false, ports, errors);
        containerPorts(spec.getInitContainers(), "spec.initContainers", true, ports, errors);
        return ports;
    }

    private static void containerPorts(
            List<V1Container> containers, String field, boolean sidecarsOnly, List<ContainerPort> out, FieldErrors errors) {
        if (containers == null) {
            return;
        }
        for (int i = 0; i < containers.size(); i++) {
            V1Container c = containers.get(i);
            if (c == null || c.getPorts() == null
                    || (sidecarsOnly && !SIDECAR_RESTART_POLICY.equals(c.getRestartPolicy()))) {
                continue;
            }
            for (int j = 0; j < c.getPorts().size(); j++) {
                ContainerPort port = containerPort(c.getPorts().get(j), field + "[" + i + "].ports[" + j + "]", errors);
                if (port != null) {
                    out.add(port);
                }
            }
        }
    }

    private static ContainerPort containerPort(V1ContainerPort port, String field, FieldErrors errors) {
        if (port == null) {
            errors.add(field + ".containerPort", "must be between 1 and 65535, inclusive");
            return null;
        }
        Integer number = port.getContainerPort();
        if (number == null || number < 1 || number > 65535) {
            errors.add(field + ".containerPort", "invalid value " + number + ": must be between 1 and 65535, inclusive");
            return null;
        }
        Protocol protocol;
        if (port.getProtocol() == null) {
            protocol = Protocol.TCP;
        } else {
            try {
                protocol = Protocol.parse(port.getProtocol());
            } catch (IllegalArgumentException e) {
                errors.add(field + ".protocol", "unsupported value " + ApiSyntax.quote(port.getProtocol())
                        + ": supported values: \"SCTP\", \"TCP\", \"UDP\"");
                return null;
            }
        }
        // name is omitempty in the API: "" and absent are the same, and the model uses null for "no name".
        String name = port.getName() == null || port.getName().isEmpty() ? null : port.getName();
        return new ContainerPort(name, number, protocol);
    }

    private static V1ObjectMeta requireMeta(V1ObjectMeta meta, String kind) {
        if (meta == null || meta.getName() == null || meta.getName().isEmpty()) {
            throw new IllegalArgumentException(kind + " has no metadata.name");
        }
        return meta;
    }

    private static <A, B> List<B> map(List<A> list, Function<A, B> f) {
        if (list == null) {
            return null;
        }
        List<B> out = new ArrayList<>(list.size());
        for (A a : list) {
            out.add(f.apply(a));
        }
        return out;
    }

    private static List<String> strings(List<String> list) {
        return map(list, KubeObjects::nullToEmpty);
    }

    private static Map<String, String> strings(Map<String, String> map) {
        Map<String, String> out = new HashMap<>();
        if (map != null) {
            map.forEach((k, v) -> out.put(nullToEmpty(k), nullToEmpty(v)));
        }
        return out;
    }

    private static String nullToEmpty(String s) {
        return s == null ? "" : s;
    }
}
