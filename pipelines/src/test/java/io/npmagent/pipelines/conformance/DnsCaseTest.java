package io.npmagent.pipelines.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.agent.source.manifest.Manifests;
import io.npmagent.agent.source.manifest.ParsedManifests;
import io.npmagent.dataplane.eval.ReferenceEvaluator;
import io.npmagent.dataplane.eval.RuleRef;
import io.npmagent.dataplane.eval.Verdict;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The DNS case means what it says, without a kernel: its kube-dns manifests read as kubeadm's (the agent's
 * own manifest path reads them), and every expectation of every step is the reference evaluator's verdict
 * for the connection as it reaches its peer: a lookup through the ClusterIP is judged as the CoreDNS pod on
 * port 53, which is what kube-proxy's DNAT makes of it.
 */
class DnsCaseTest {
    private static final PodKey DNS_POD = PodKey.parse(KubeDns.POD_KEY);

    private static ClusterState cluster(List<PolicyKey> policies) throws IOException {
        ConformanceModel model = CaseLoader.loadModel(ConformanceCasesTest.ROOT.resolve("model.yaml"));
        ClusterState cluster = ClusterState.EMPTY.applyAll(model.asEvents());
        StringBuilder yaml = new StringBuilder(KubeDns.manifests());
        for (PolicyKey key : policies) {
            yaml.append("---\n").append(DnsCase.manifest(key));
        }
        ParsedManifests parsed = Manifests.parse(yaml.toString(), "dns case");
        assertThat(parsed.errors()).isEmpty();
        assertThat(parsed.policies()).extracting(p -> p.key()).containsExactlyElementsOf(policies);
        List<ClusterEvent> events = new ArrayList<>();
        parsed.namespaces().forEach(n -> events.add(new ClusterEvent.NamespaceUpserted(n)));
        parsed.pods().forEach(p -> events.add(new ClusterEvent.PodUpserted(p)));
        parsed.policies().forEach(p -> events.add(new ClusterEvent.PolicyUpserted(p)));
        return cluster.applyAll(events);
    }

    @Test
    void everyExpectationIsTheReferenceEvaluatorsVerdict() throws IOException {
        List<String> wrong = new ArrayList<>();
        int checked = 0;
        for (DnsCase.Step step : DnsCase.steps()) {
            ReferenceEvaluator evaluator = new ReferenceEvaluator(cluster(step.policies()));
            for (DnsCase.Lookup l : step.lookups()) {
                boolean allowed = evaluator.allowed(PodKey.parse(l.from()), DNS_POD, false, 53, l.tcp() ? Protocol.TCP : Protocol.UDP).allowed();
                checked++;
                if (allowed != l.resolves()) {
                    wrong.add("step " + step.number() + " lookup " + l);
                }
            }
            for (DnsCase.Reach r : step.probes()) {
                checked++;
                if (evaluator.allowed(PodKey.parse(r.from()), PodKey.parse(r.to()), false, r.port(), r.protocol()).allowed() != r.allowed()) {
                    wrong.add("step " + step.number() + " probe " + r);
                }
            }
        }
        assertThat(checked).isEqualTo(14);
        assertThat(wrong).isEmpty();
    }

    @Test
    void theDnsRuleAdmitsDnsToKubeDnsAndNothingElse() throws IOException {
        ReferenceEvaluator evaluator = new ReferenceEvaluator(cluster(List.of(DnsCase.DENY, DnsCase.ALLOW_DNS)));
        PodKey xa = PodKey.parse("x/a");
        for (Protocol p : List.of(Protocol.UDP, Protocol.TCP)) {
            Verdict v = evaluator.allowed(xa, DNS_POD, false, 53, p);
            assertThat(v.egress().allowedBy()).extracting(RuleRef::policy).containsExactly(DnsCase.ALLOW_DNS);
            assertThat(v.egress().isolatedBy()).containsExactlyInAnyOrder(DnsCase.DENY, DnsCase.ALLOW_DNS);
        }
        assertThat(evaluator.allowed(xa, DNS_POD, false, 54, Protocol.UDP).allowed()).as("another port").isFalse();
        assertThat(evaluator.allowed(xa, PodKey.parse("y/a"), false, 53, Protocol.UDP).allowed())
                .as("port 53 of a pod that is not kube-dns").isFalse();
        // Every pod of x, not just x/a; other namespaces have no policy.
        assertThat(evaluator.allowed(PodKey.parse("x/c"), DNS_POD, false, 53, Protocol.UDP).allowed()).isTrue();
        assertThat(evaluator.allowed(PodKey.parse("z/c"), PodKey.parse("y/b"), false, 80, Protocol.TCP).allowed()).isTrue();
    }

    @Test
    void theCaseStartsAndEndsWithNoPolicy() {
        List<DnsCase.Step> steps = DnsCase.steps();
        assertThat(steps.get(0).policies()).isEmpty();
        assertThat(steps.get(steps.size() - 1).policies()).as("the model as the cases after it expect it").isEmpty();
        assertThat(steps).allSatisfy(s -> assertThat(DnsCase.POLICIES).containsAll(s.policies()));
        assertThat(steps).extracting(DnsCase.Step::number).containsExactly(1, 2, 3, 4);
    }

    @Test
    void theDnsPodIsKubeadmsKubeDnsWithNoDeclaredPort() {
        ParsedManifests parsed = Manifests.parse(KubeDns.manifests(), "kube-dns");
        assertThat(parsed.errors()).isEmpty();
        assertThat(parsed.namespaces()).singleElement()
                .satisfies(ns -> assertThat(ns.labels()).containsEntry("kubernetes.io/metadata.name", "kube-system"));
        Pod pod = parsed.pods().get(0);
        assertThat(parsed.pods()).hasSize(1);
        assertThat(pod.key()).isEqualTo(DNS_POD);
        assertThat(pod.labels()).containsExactly(Map.entry("k8s-app", "kube-dns"));
        assertThat(pod.ips()).extracting(Object::toString).containsExactly(KubeDns.POD_IP);
        assertThat(pod.ports()).as("the sandbox would start its own server on a declared port 53").isEmpty();
    }

    @Test
    @SuppressWarnings("unchecked")
    void theServiceIsKubeDnsOnItsFixedClusterIp() {
        List<Map<String, Object>> docs = new ArrayList<>();
        new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(KubeDns.manifests()).forEach(d -> docs.add((Map<String, Object>) d));
        Map<String, Object> service = docs.stream().filter(d -> d.get("kind").equals("Service")).findFirst().orElseThrow();
        assertThat((Map<String, Object>) service.get("metadata")).containsEntry("namespace", "kube-system").containsEntry("name", "kube-dns");
        Map<String, Object> spec = (Map<String, Object>) service.get("spec");
        assertThat(spec).containsEntry("clusterIP", "10.96.0.10").containsEntry("selector", Map.of("k8s-app", "kube-dns"));
        assertThat((List<Map<String, Object>>) spec.get("ports")).containsExactly(
                Map.of("name", "dns", "port", 53, "targetPort", 53, "protocol", "UDP"),
                Map.of("name", "dns-tcp", "port", 53, "targetPort", 53, "protocol", "TCP"));
    }
}
