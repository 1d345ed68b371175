package io.npmagent.dataplane.model;

import com.github.benmanes.caffeine.cache.Interner;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The parts of a pod that NetworkPolicy and bandwidth enforcement read.
 *
 * <p>Three facts decide a pod's role, and every component asks these methods rather than the fields:
 * <ul>
 *   <li>{@link #policyEndpoint()}: a live pod on the pod network. Only such pods are selected by
 *       {@code podSelector} (as targets or as peers). Host-network pods share the node's address, so
 *       their traffic is judged by that address alone (ipBlock), never by their labels.
 *   <li>A terminal pod (Succeeded, Failed) has released its addresses; it is no endpoint.
 *   <li>A pod with no address yet is an endpoint with nothing to enforce until one arrives.
 * </ul>
 */
public record Pod(
        String namespace,
        String name,
        Map<String, String> labels,
        List<IpAddress> ips,
        String nodeName,
        boolean hostNetwork,
        PodPhase phase,
        List<ContainerPort> ports,
        Map<String, String> annotations) {

    /**
     * The pods of one Deployment or ReplicaSet carry equal labels and ports, and the agent holds every pod of
     * the cluster: each distinct set is held once, for as long as a pod holds it (at 150,000 pods, 22 MB).
     */
    private static final Interner<Map<String, String>> LABEL_SETS = Interner.newWeakInterner();
    private static final Interner<List<ContainerPort>> PORT_LISTS = Interner.newWeakInterner();

    public Pod {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
        labels = labels == null || labels.isEmpty() ? Map.of() : LABEL_SETS.intern(Map.copyOf(labels));
        ips = ips == null ? List.of() : List.copyOf(ips);
        phase = phase == null ? PodPhase.UNKNOWN : phase;
        ports = ports == null || ports.isEmpty() ? List.of() : PORT_LISTS.intern(List.copyOf(ports));
        annotations = annotations == null ? Map.of() : Map.copyOf(annotations);
    }

    public static Builder builder(String namespace, String name) {
        return new Builder(namespace, name);
    }

    public PodKey key() {
        return new PodKey(namespace, name);
    }

    public boolean policyEndpoint() {
        return !hostNetwork && !phase.terminal();
    }

    public Optional<IpAddress> ipv4() {
        return ips.stream().filter(ip -> !ip.v6()).findFirst();
    }

    public Optional<IpAddress> ipv6() {
        return ips.stream().filter(IpAddress::v6).findFirst();
    }

    /** The port number a named port resolves to on this pod, if it declares that name for that protocol. */
    public Optional<Integer> namedPort(String portName, Protocol protocol) {
        for (ContainerPort p : ports) {
            if (portName.equals(p.name()) && p.protocol() == protocol) {
                return Optional.of(p.port());
            }
        }
        return Optional.empty();
    }

    public Builder toBuilder() {
        Builder b = new Builder(namespace, name);
        b.labels = labels;
        b.ips = new ArrayList<>(ips);
        b.nodeName = nodeName;
        b.hostNetwork = hostNetwork;
        b.phase = phase;
        b.ports = new ArrayList<>(ports);
        b.annotations = annotations;
        return b;
    }

    /** For tests and converters: a running pod with no labels, addresses or ports unless set. */
    public static final class Builder {
        private final String namespace;
        private final String name;
        private Map<String, String> labels = Map.of();
        private List<IpAddress> ips = new ArrayList<>();
        private String nodeName;
        private boolean hostNetwork;
        private PodPhase phase = PodPhase.RUNNING;
        private List<ContainerPort> ports = new ArrayList<>();
        private Map<String, String> annotations = Map.of();

        private Builder(String namespace, String name) {
            this.namespace = namespace;
            this.name = name;
        }

        public Builder labels(Map<String, String> labels) {
            this.labels = labels;
            return this;
        }

        public Builder ip(String ip) {
            return ip(IpAddress.parse(ip));
        }

        public Builder ip(IpAddress ip) {
            this.ips.add(ip);
            return this;
        }

        public Builder ips(List<IpAddress> ips) {
            this.ips = new ArrayList<>(ips);
            return this;
        }

        public Builder nodeName(String nodeName) {
            this.nodeName = nodeName;
            return this;
        }

        public Builder hostNetwork(boolean hostNetwork) {
            this.hostNetwork = hostNetwork;
            return this;
        }

        public Builder phase(PodPhase phase) {
            this.phase = phase;
            return this;
        }

        public Builder port(String portName, int port, Protocol protocol) {
            this.ports.add(new ContainerPort(portName, port, protocol));
            return this;
        }

        public Builder ports(List<ContainerPort> ports) {
            this.ports = new ArrayList<>(ports);
            return this;
        }

        public Builder annotations(Map<String, String> annotations) {
            this.annotations = annotations;
            return this;
        }

        public Pod build() {
            return new Pod(namespace, name, labels, ips, nodeName, hostNetwork, phase, ports, annotations);
        }
    }
}
