package io.npmagent.agent.source.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodIP;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodStatus;
import io.npmagent.dataplane.model.ContainerPort;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.LabelSelector;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PodPhase;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.ValidationError;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class KubeObjectsTest {

    private static V1LabelSelector labels(String key, String value) {
        return new V1LabelSelector().matchLabels(Map.of(key, value));
    }

    @Test
    void fullNetworkPolicyConvertsExactly() {
        V1NetworkPolicy v1 = new V1NetworkPolicy()
                .metadata(new V1ObjectMeta().namespace("shop").name("everything"))
                .spec(new V1NetworkPolicySpec()
                        .podSelector(new V1LabelSelector()
                                .matchLabels(Map.of("app", "api"))
                                .addMatchExpressionsItem(new V1LabelSelectorRequirement()
                                        .key("tier").operator("In").values(List.of("a", "b")))
                                .addMatchExpressionsItem(new V1LabelSelectorRequirement()
                                        .key("legacy").operator("DoesNotExist").values(null)))
                        .policyTypes(List.of("Ingress", "Egress"))
                        .addIngressItem(new V1NetworkPolicyIngressRule()
                                .addFromItem(new V1NetworkPolicyPeer()
                                        .namespaceSelector(labels("team", "web"))
                                        .podSelector(labels("app", "frontend")))
                                .addFromItem(new V1NetworkPolicyPeer()
                                        .ipBlock(new V1IPBlock().cidr("10.0.0.0/8")
                                                .except(List.of("10.1.0.0/16", "10.2.0.0/16"))))
                                .addPortsItem(new V1NetworkPolicyPort().protocol("TCP")
                                        .port(new IntOrString(8000)).endPort(8080))
                                .addPortsItem(new V1NetworkPolicyPort().port(new IntOrString("http"))))
                        .addEgressItem(new V1NetworkPolicyEgressRule()
                                .addToItem(new V1NetworkPolicyPeer().namespaceSelector(new V1LabelSelector()))
                                .addPortsItem(new V1NetworkPolicyPort().protocol("UDP")))
                        .addEgressItem(new V1NetworkPolicyEgressRule()));

        NetworkPolicy policy = KubeObjects.policy(v1);

        NetworkPolicy expected = new NetworkPolicy(
                "shop",
                "everything",
                new LabelSelector(Map.of("app", "api"), List.of(
                        new LabelSelector.Requirement("tier", "In", List.of("a", "b")),
                        new LabelSelector.Requirement("legacy", "DoesNotExist", null))),
                List.of("Ingress", "Egress"),
                List.of(new NetworkPolicy.Rule(
                        List.of(
                                new NetworkPolicy.Peer(
                                        LabelSelector.matchLabels(Map.of("app", "frontend")),
                                        LabelSelector.matchLabels(Map.of("team", "web")),
                                        null),
                                new NetworkPolicy.Peer(null, null,
                                        new NetworkPolicy.IpBlock("10.0.0.0/8", List.of("10.1.0.0/16", "10.2.0.0/16")))),
                        List.of(
                                new NetworkPolicy.Port("TCP", NetworkPolicy.PortValue.number(8000), 8080),
                                new NetworkPolicy.Port(null, NetworkPolicy.PortValue.name("http"), null)))),
                List.of(
                        new NetworkPolicy.Rule(
                                List.of(new NetworkPolicy.Peer(null, LabelSelector.EMPTY, null)),
                                List.of(new NetworkPolicy.Port("UDP", null, null))),
                        // client-java gives an absent list as []: passed through as [], meaning the same.
                        new NetworkPolicy.Rule(List.of(), List.of())));
        assertThat(policy).isEqualTo(expected);
        // The port value keeps its IntOrString kind: "http" is a name, 8000 a number.
        assertThat(policy.ingress().get(0).ports().get(1).port()).isInstanceOf(NetworkPolicy.PortValue.Name.class);
        assertThat(policy.ingress().get(0).ports().get(0).port()).isInstanceOf(NetworkPolicy.PortValue.Number.class);
    }

    @Test
    void policyKeepsNullWhereTheObjectHasNull() {
        V1NetworkPolicy v1 = new V1NetworkPolicy()
                .metadata(new V1ObjectMeta().namespace("x").name("p"))
                .spec(new V1NetworkPolicySpec().podSelector(null).policyTypes(null).ingress(null).egress(null));

        NetworkPolicy policy = KubeObjects.policy(v1);

        assertThat(policy.podSelector()).isNull();
        assertThat(policy.policyTypes()).isNull();
        assertThat(policy.ingress()).isNull();
        assertThat(policy.egress()).isNull();
    }

    @Test
    void nullElementsBecomeZeroValuesAsInGo() {
        List<V1NetworkPolicyPeer> peers = new ArrayList<>(Arrays.asList((V1NetworkPolicyPeer) null));
        List<String> values = new ArrayList<>(Arrays.asList("a", null));
        Map<String, String> matchLabels = new HashMap<>();
        matchLabels.put("app", null);
        V1NetworkPolicy v1 = new V1NetworkPolicy()
                .metadata(new V1ObjectMeta().namespace("x").name("p"))
                .spec(new V1NetworkPolicySpec()
                        .podSelector(new V1LabelSelector().matchLabels(matchLabels).addMatchExpressionsItem(
                                new V1LabelSelectorRequirement().key("k").operator("In").values(values)))
                        .ingress(new ArrayList<>(Arrays.asList(
                                (V1NetworkPolicyIngressRule) null, new V1NetworkPolicyIngressRule().from(peers)))));

        NetworkPolicy policy = KubeObjects.policy(v1);

        assertThat(policy.podSelector().matchLabels()).containsExactly(Map.entry("app", ""));
        assertThat(policy.podSelector().matchExpressions().get(0).values()).containsExactly("a", "");
        assertThat(policy.ingress().get(0)).isEqualTo(new NetworkPolicy.Rule(null, null));
        assertThat(policy.ingress().get(1).peers()).containsExactly(new NetworkPolicy.Peer(null, null, null));
    }

    @Test
    void namespaceGetsItsLabelsAndTheNameLabel() {
        Namespace ns = KubeObjects.namespace(new V1Namespace()
                .metadata(new V1ObjectMeta().name("shop").labels(Map.of("team", "web"))));

        assertThat(ns.name()).isEqualTo("shop");
        assertThat(ns.labels()).containsOnly(
                Map.entry("team", "web"), Map.entry(Namespace.NAME_LABEL, "shop"));
    }

    private static V1Pod richPod() {
        return new V1Pod()
                .metadata(new V1ObjectMeta().namespace("shop").name("api")
                        .labels(Map.of("app", "api"))
                        .annotations(Map.of("kubernetes.io/egress-bandwidth", "10M")))
                .spec(new V1PodSpec()
                        .nodeName("node-a")
                        .hostNetwork(true)
                        .addContainersItem(new V1Container().name("app")
                                .addPortsItem(new V1ContainerPort().name("http").containerPort(8080))
                                .addPortsItem(new V1ContainerPort().containerPort(53).protocol("UDP"))
                                .addPortsItem(new V1ContainerPort().name("bad").containerPort(81).protocol("tcp")))
                        .addInitContainersItem(new V1Container().name("setup")
                                .addPortsItem(new V1ContainerPort().name("ignored").containerPort(7000)))
                        .addInitContainersItem(new V1Container().name("sidecar").restartPolicy("Always")
                                .addPortsItem(new V1ContainerPort().name("metrics").containerPort(9100).protocol("SCTP"))
                                .addPortsItem(new V1ContainerPort().name("huge").containerPort(70000))))
                .status(new V1PodStatus()
                        .phase("Running")
                        .podIP("10.244.1.11")
                        .addPodIPsItem(new V1PodIP().ip("10.244.1.11"))
                        .addPodIPsItem(new V1PodIP().ip("10.244.1.300"))
                        .addPodIPsItem(new V1PodIP().ip("fd00::11")));
    }

    @Test
    void podConvertsEveryFieldAndSkipsOnlyTheBadItems() {
        FieldErrors errors = new FieldErrors(ObjectRef.of(new PodKey("shop", "api")));

        Pod pod = KubeObjects.pod(richPod(), errors);

        assertThat(pod.key()).isEqualTo(new PodKey("shop", "api"));
        assertThat(pod.labels()).containsExactly(Map.entry("app", "api"));
        assertThat(pod.annotations()).containsExactly(Map.entry("kubernetes.io/egress-bandwidth", "10M"));
        assertThat(pod.nodeName()).isEqualTo("node-a");
        assertThat(pod.hostNetwork()).isTrue();
        assertThat(pod.phase()).isEqualTo(PodPhase.RUNNING);
        assertThat(pod.ips()).containsExactly(IpAddress.parse("10.244.1.11"), IpAddress.parse("fd00::11"));
        assertThat(pod.ports()).containsExactly(
                new ContainerPort("http", 8080, Protocol.TCP),
                new ContainerPort(null, 53, Protocol.UDP),
                new ContainerPort("metrics", 9100, Protocol.SCTP));
        assertThat(errors.list()).extracting(ValidationError::field).containsExactly(
                "status.podIPs[1].ip",
                "spec.containers[0].ports[2].protocol",
                "spec.initContainers[1].ports[1].containerPort");
        assertThat(errors.list().get(0).reason()).contains("\"10.244.1.300\"");
        assertThat(errors.list().get(1).reason()).contains("\"tcp\"");
        assertThat(errors.list().get(2).reason()).contains("70000");
    }

    @Test
    void podIpIsTheFallbackWhenPodIPsIsEmpty() {
        V1Pod v1 = new V1Pod()
                .metadata(new V1ObjectMeta().namespace("a").name("b"))
                .status(new V1PodStatus().podIP("fd00::1").podIPs(List.of()));
        FieldErrors errors = new FieldErrors(ObjectRef.of(new PodKey("a", "b")));

        Pod pod = KubeObjects.pod(v1, errors);

        assertThat(pod.ips()).containsExactly(IpAddress.parse("fd00::1"));
        assertThat(pod.hostNetwork()).isFalse();
        assertThat(pod.phase()).isEqualTo(PodPhase.UNKNOWN);
        assertThat(errors.count()).isZero();
    }

    @Test
    void badPodIpIsReportedUnderPodIP() {
        V1Pod v1 = new V1Pod()
                .metadata(new V1ObjectMeta().namespace("a").name("b"))
                .status(new V1PodStatus().podIP("not-an-ip"));
        FieldErrors errors = new FieldErrors(ObjectRef.of(new PodKey("a", "b")));

        Pod pod = KubeObjects.pod(v1, errors);

        assertThat(pod.ips()).isEmpty();
        assertThat(errors.list()).extracting(ValidationError::field).containsExactly("status.podIP");
    }

    @Test
    void objectsWithoutNameOrNamespaceAreRefused() {
        FieldErrors errors = new FieldErrors(ObjectRef.of(new PodKey("a", "b")));
        assertThatThrownBy(() -> KubeObjects.pod(new V1Pod().metadata(new V1ObjectMeta().name("b")), errors))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("metadata.namespace");
        assertThatThrownBy(() -> KubeObjects.namespace(new V1Namespace()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("metadata.name");
    }
}
