package io.npmagent.agent.source.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.agent.source.manifest.Manifests;
import io.npmagent.agent.source.manifest.ParsedManifests;
import io.npmagent.dataplane.eval.Endpoint;
import io.npmagent.dataplane.eval.ReferenceEvaluator;
import io.npmagent.dataplane.eval.Verdict;
import io.npmagent.dataplane.model.ClusterNetworkPolicy;
import io.npmagent.dataplane.model.LabelSelector;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.Protocol;
import io.npmagent.dataplane.model.ValidationError;
import io.npmagent.dataplane.tier.ClusterPolicyNormalizer;
import io.npmagent.dataplane.tier.NormalizedClusterPolicy;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * ClusterNetworkPolicy manifests as the API server stores them, read into the model: every field of v1beta1
 * (the experimental channel's too), and a field of the wrong type reported under its path and read so that
 * the policy fails closed.
 */
class ClusterPolicyJsonTest {
    private static final String NAMESPACES = """
            apiVersion: v1
            kind: Namespace
            metadata: {name: shop, labels: {team: shop}}
            ---
            apiVersion: v1
            kind: Namespace
            metadata: {name: other}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {name: api, namespace: shop, labels: {app: api}}
            spec: {containers: [{name: c, ports: [{name: http, containerPort: 8080}]}]}
            status: {podIP: 10.0.0.1}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {name: client, namespace: other, labels: {app: client}}
            spec: {containers: [{name: c}]}
            status: {podIP: 10.0.0.2}
            """;

    private static final String EVERY_FIELD = """
            apiVersion: policy.networking.k8s.io/v1beta1
            kind: ClusterNetworkPolicy
            metadata: {name: every-field}
            spec:
              tier: Admin
              priority: 10
              subject:
                pods:
                  namespaceSelector: {matchLabels: {team: shop}}
                  podSelector: {matchExpressions: [{key: app, operator: In, values: [api]}]}
              ingress:
              - name: from-others
                action: Deny
                from:
                - namespaces: {matchLabels: {kubernetes.io/metadata.name: other}}
                - pods: {namespaceSelector: {}, podSelector: {matchLabels: {app: client}}}
                protocols:
                - tcp: {destinationPort: {number: 8080}}
                - destinationNamedPort: http
              egress:
              - action: Pass
                to:
                - networks: [10.0.0.0/8, "fd00::/8"]
                - nodes: {matchLabels: {role: worker}}
                protocols:
                - udp: {destinationPort: {range: {start: 1000, end: 2000}}}
                - sctp: {destinationPort: {number: 9}}
              - action: Accept
                to: [{domainNames: [example.com]}]
            """;

    private static ParsedManifests parse(String yaml) {
        return Manifests.parse(yaml, "test.yaml");
    }

    @Test
    void everyFieldIsReadAsWritten() {
        ParsedManifests parsed = parse(EVERY_FIELD);
        assertThat(parsed.errors()).isEmpty();
        ClusterNetworkPolicy p = parsed.clusterPolicies().get(0);
        assertThat(p.name()).isEqualTo("every-field");
        assertThat(p.tier()).isEqualTo("Admin");
        assertThat(p.priority()).isEqualTo(10);
        assertThat(p.subject().pods().namespaceSelector()).isEqualTo(new LabelSelector(Map.of("team", "shop"), List.of()));
        assertThat(p.subject().pods().podSelector().matchExpressions())
                .containsExactly(new LabelSelector.Requirement("app", "In", List.of("api")));
        ClusterNetworkPolicy.Rule in = p.ingress().get(0);
        assertThat(in.name()).isEqualTo("from-others");
        assertThat(in.action()).isEqualTo("Deny");
        assertThat(in.peers()).hasSize(2);
        assertThat(in.peers().get(1).pods().podSelector()).isEqualTo(new LabelSelector(Map.of("app", "client"), List.of()));
        assertThat(in.protocols().get(0).tcp().destinationPort().number()).isEqualTo(8080);
        assertThat(in.protocols().get(1).destinationNamedPort()).isEqualTo("http");
        ClusterNetworkPolicy.Rule out = p.egress().get(0);
        assertThat(out.peers().get(0).networks()).containsExactly("10.0.0.0/8", "fd00::/8");
        assertThat(out.peers().get(1).nodes()).isEqualTo(new LabelSelector(Map.of("role", "worker"), List.of()));
        assertThat(out.protocols().get(0).udp().destinationPort().range()).isEqualTo(new ClusterNetworkPolicy.PortRange(1000, 2000));
        assertThat(out.protocols().get(1).sctp().destinationPort().number()).isEqualTo(9);
        assertThat(p.egress().get(1).peers().get(0).domainNames()).containsExactly("example.com");

        NormalizedClusterPolicy n = ClusterPolicyNormalizer.normalize(p);
        assertThat(n.errors()).extracting(ValidationError::field)
                .as("read, then refused by the normalizer as unsupported: domainNames")
                .containsExactly("spec.egress[1].to[0].domainNames", "spec.egress[1]");
    }

    @Test
    void aManifestDirectoryPolicyIsEnforcedByTheEvaluatorAsTheAgentWould() {
        ParsedManifests parsed = parse(NAMESPACES + "---\n" + EVERY_FIELD);
        ReferenceEvaluator e = new ReferenceEvaluator(parsed.toClusterState());
        Verdict v = e.allowed(PodKey.parse("other/client"), PodKey.parse("shop/api"), false, 8080, Protocol.TCP);
        assertThat(v.allowed()).isFalse();
        assertThat(v.ingress().attribution()).isEqualTo("Admin cnp/every-field ingress[0] \"from-others\"");
        assertThat(e.allowed(Endpoint.external("10.0.0.2"), Endpoint.external("10.0.0.1"), 8081, Protocol.TCP).allowed()).isTrue();
    }

    @Test
    void aFieldOfTheWrongTypeIsReportedUnderItsPathAndFailsClosed() {
        ParsedManifests parsed = parse("""
                apiVersion: policy.networking.k8s.io/v1beta1
                kind: ClusterNetworkPolicy
                metadata: {name: typed-wrong}
                spec:
                  tier: Admin
                  priority: "high"
                  subject: {namespaces: {}}
                  ingress:
                  - action: Accept
                    from: [{namespaces: {}}]
                    protocols: {tcp: {destinationPort: {number: 80}}}
                  egress: {action: Deny}
                """);
        assertThat(parsed.errors()).containsExactly(
                "test.yaml document 1: ClusterNetworkPolicy typed-wrong: spec.priority: must be an integer",
                "test.yaml document 1: ClusterNetworkPolicy typed-wrong: spec.ingress[0].protocols: must be a list",
                "test.yaml document 1: ClusterNetworkPolicy typed-wrong: spec.egress: must be a list");
        ClusterNetworkPolicy p = parsed.clusterPolicies().get(0);
        assertThat(p.priority()).as("absent: the normalizer makes the policy deny-only").isNull();
        assertThat(p.ingress().get(0).protocols()).as("never every port").hasSize(1);
        assertThat(p.egress()).as("never no rules: one that denies whatever reaches it").hasSize(1).containsOnlyNulls();
        NormalizedClusterPolicy n = ClusterPolicyNormalizer.normalize(p);
        assertThat(n.valid()).isFalse();
        assertThat(n.ingress()).as("an Accept that cannot be read matches nothing").isEmpty();
        assertThat(n.egress()).singleElement().satisfies(r -> assertThat(r.anyPeer()).isTrue());
    }
}
