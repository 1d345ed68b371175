package io.npmagent.pipelines.scale;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeerBuilder;
import io.npmagent.pipelines.bench.BenchApiServer;
import io.npmagent.pipelines.bench.BenchCluster;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The objects of a scenario, created through a real API server, and the changes the event phase makes. Pods on this
 * node have 10.128.0.0/16 addresses (an interface each on the node), pods elsewhere 10.0.0.0/10, pods
 * made by churn 10.64.0.0/16; the two probe pods, in namespace {@code probe}, are 10.200.0.1 (client)
 * and 10.200.0.2 (server, port 8080), and policy {@code probe/probe} selects the server and admits either
 * the client or no one.
 */
public final class ScaleCluster {
    public static final String NODE = BenchCluster.NODE;
    public static final String CLIENT_IP = "10.200.0.1";
    public static final String SERVER_IP = "10.200.0.2";
    /** Where npm640's pods and policies live. */
    static final String NPM640_NAMESPACE = "bench";

    private ScaleCluster() {}

    /** Creates the scenario's cluster through the API server; returns the local pods' addresses (they need interfaces). */
    static List<String> preload(BenchApiServer api, ScaleScenario s) {
        List<String> local = new ArrayList<>();
        if (s.npm640()) {
            // The policies are not made here: each run creates them while the agent runs (npm640Policies).
            api.create(namespace(NPM640_NAMESPACE));
            for (int k = 0; k < s.pods(); k++) {
                String ip = localIp(k);
                local.add(ip);
                api.create(pod(NPM640_NAMESPACE, "svc-" + (k / 2) + "-" + (k % 2), Map.of("app", "svc-" + (k / 2)), NODE, ip, 80));
            }
        } else {
            int namespaces = BenchCluster.namespaces(s.pods());
            for (int n = 0; n < namespaces; n++) {
                Namespace ns = namespace("ns-" + n);
                ns.getMetadata().getLabels().put("team", "t" + (n % 7));
                api.create(ns);
            }
            int every = Math.max(1, s.pods() / s.localPods());
            for (int i = 0; i < s.pods(); i++) {
                boolean isLocal = i % every == 0 && local.size() < s.localPods();
                String ip = isLocal ? localIp(local.size()) : BenchCluster.address(i);
                if (isLocal) {
                    local.add(ip);
                }
                Pod pod = BenchCluster.pod(i, isLocal ? NODE : "node-" + (2 + i % 997), ip);
                api.create(pod);
            }
            for (int i = 0; i < s.policies(); i++) {
                NetworkPolicy p = BenchCluster.policy(i, namespaces);
                api.create(p);
            }
        }
        api.create(namespace("probe"));
        api.create(pod("probe", "client", Map.of("app", "probe-client"), NODE, CLIENT_IP, 0));
        api.create(pod("probe", "server", Map.of("app", "probe-server"), NODE, SERVER_IP, ScaleNode.PROBE_PORT));
        api.create(probePolicy(true));
        api.flush();
        return local;
    }

    /** NPM's 640 policies (one per service, admitting the next service's pods on port 80), as a run creates them. */
    static List<NetworkPolicy> npm640Policies(ScaleScenario s) {
        List<NetworkPolicy> policies = new ArrayList<>();
        for (int i = 0; i < s.policies(); i++) {
            policies.add(npm640Policy(i, s.policies(), 80));
        }
        return policies;
    }

    /** The probe policy admitting the client ({@code open}) or no one. */
    public static NetworkPolicy probePolicy(boolean open) {
        return new NetworkPolicyBuilder().withNewMetadata().withNamespace("probe").withName("probe").endMetadata()
                .withNewSpec().withNewPodSelector().addToMatchLabels("app", "probe-server").endPodSelector().withPolicyTypes("Ingress")
                .addNewIngress().withFrom(new NetworkPolicyPeerBuilder().withNewPodSelector()
                        .addToMatchLabels("app", open ? "probe-client" : "no-one").endPodSelector().build())
                .addNewPort().withProtocol("TCP").withPort(new IntOrString(ScaleNode.PROBE_PORT)).endPort().endIngress().endSpec().build();
    }

    /**
     * ClusterNetworkPolicy {@code i} of the scenario's: three in four Admin, one in four Baseline, priorities 0-99
     * (equal ones ordered by name); every other one selects every pod (the probe pods too, so each flip's render
     * walks the tiers), the rest one team's namespaces; an ingress rule (Deny, Accept or Pass) from one app of one
     * team's namespaces on one port, and an egress Deny to one /16 of the other nodes' pods on a port range. None
     * matches the probe's connection (namespace {@code probe} has no team; its addresses are in no such /16), so the
     * flips time the same verdicts as without them.
     */
    static GenericKubernetesResource clusterPolicy(int i, ScaleScenario s) {
        String action = switch (i % 3) {
            case 0 -> "Deny";
            case 1 -> "Accept";
            default -> "Pass";
        };
        String subject = i % 2 == 0 ? "{\"namespaces\": {}}" : "{\"namespaces\": {\"matchLabels\": {\"team\": \"t" + (i % 7) + "\"}}}";
        String json = """
                {"apiVersion": "policy.networking.k8s.io/v1beta1", "kind": "ClusterNetworkPolicy", "metadata": {"name": "cnp-%d"},
                 "spec": {"tier": "%s", "priority": %d, "subject": %s,
                  "ingress": [{"name": "from-app", "action": "%s",
                    "from": [{"pods": {"namespaceSelector": {"matchLabels": {"team": "t%d"}}, "podSelector": {"matchLabels": {"app": "app-%d"}}}}],
                    "protocols": [{"tcp": {"destinationPort": {"number": %d}}}]}],
                  "egress": [{"name": "to-network", "action": "Deny", "to": [{"networks": ["10.%d.0.0/16"]}],
                    "protocols": [{"tcp": {"destinationPort": {"range": {"start": 1000, "end": 2000}}}}]}]}}
                """.formatted(i, i % 4 == 3 ? "Baseline" : "Admin", i % 100, subject, action, (i + 1) % 7, i % BenchCluster.APPS,
                8080 + i % 10, i % 64);
        return Serialization.unmarshal(json, GenericKubernetesResource.class);
    }

    /** Policy {@code i} edited: its port moved ({@code version} odd or even), which changes its rules and nothing else. */
    static NetworkPolicy edited(ScaleScenario s, int i, int version) {
        if (s.npm640()) {
            return npm640Policy(i, s.policies(), version % 2 == 0 ? 80 : 81);
        }
        NetworkPolicy p = BenchCluster.policy(i, BenchCluster.namespaces(s.pods()));
        p.getSpec().getIngress().get(0).getPorts().get(0).setPort(new IntOrString(version % 2 == 0 ? 8080 : 9090));
        return p;
    }

    /** Churn pod {@code n}: on another node, in one of the scenario's namespaces, a peer of the policies that select its app. */
    static Pod churnPod(ScaleScenario s, int n) {
        int namespaces = BenchCluster.namespaces(s.pods());
        String ip = "10.64." + ((n >> 8) & 255) + "." + (n & 255);
        return pod("ns-" + (n % namespaces), "churn-" + n, Map.of("app", "app-" + (n % BenchCluster.APPS)), "node-" + (2 + n % 997), ip, 8080);
    }

    private static NetworkPolicy npm640Policy(int i, int services, int port) {
        return new NetworkPolicyBuilder().withNewMetadata().withNamespace(NPM640_NAMESPACE).withName("svc-" + i).endMetadata()
                .withNewSpec().withNewPodSelector().addToMatchLabels("app", "svc-" + i).endPodSelector()
                .addNewIngress().withFrom(new NetworkPolicyPeerBuilder().withNewPodSelector()
                        .addToMatchLabels("app", "svc-" + ((i + 1) % services)).endPodSelector().build())
                .addNewPort().withProtocol("TCP").withPort(new IntOrString(port)).endPort().endIngress().endSpec().build();
    }

    private static String localIp(int k) {
        return "10.128." + (k / 250) + "." + (k % 250 + 1);
    }

    private static Namespace namespace(String name) {
        return new NamespaceBuilder().withNewMetadata().withName(name).addToLabels("kubernetes.io/metadata.name", name).endMetadata().build();
    }

    private static Pod pod(String ns, String name, Map<String, String> labels, String node, String ip, int port) {
        PodBuilder b = new PodBuilder().withNewMetadata().withNamespace(ns).withName(name).withLabels(labels).endMetadata();
        var spec = b.withNewSpec().withNodeName(node).addNewContainer().withName("main").withImage("registry.example.com/app:1");
        if (port > 0) {
            spec = spec.addNewPort().withName("http").withContainerPort(port).withProtocol("TCP").endPort();
        }
        return spec.endContainer().endSpec().withNewStatus().withPhase("Running").withPodIP(ip).addNewPodIP(ip).endStatus().build();
    }
}
