package io.npmagent.pipelines.conformance;

import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import java.util.List;

/**
 * The DNS case (issue #15): the policy pair nearly every cluster with default-deny egress has, a
 * default-deny egress policy for a namespace and a second one admitting DNS to the cluster's kube-dns pods
 * ({@code namespaceSelector} {@code kubernetes.io/metadata.name: kube-system} with {@code podSelector}
 * {@code k8s-app: kube-dns}, UDP and TCP 53), tried with a real lookup through the kube-dns ClusterIP
 * ({@link KubeDns}, {@link Dig}): kube-proxy's DNAT picks the CoreDNS pod, and the backend must judge the
 * query after it, as the pod and port the DNAT chose. Steps are cumulative, like a case's:
 *
 * <ol>
 *   <li>no policy: {@code x/a} resolves the name over UDP and over TCP;
 *   <li>default-deny egress in {@code x} plus allow-DNS: it still resolves both ways, while a TCP connection
 *       from {@code x/a} to other model pods (directly and through their Services) is dropped and {@code y/a}
 *       still reaches {@code x/a} (egress only);
 *   <li>allow-DNS deleted: no answer over UDP or TCP from {@code x/a}, while {@code y/a} (no policy) still
 *       resolves, so it is the policy and not CoreDNS that fails the lookup;
 *   <li>default-deny deleted too: {@code x/a} resolves again, and the model is as it was for what follows.
 * </ol>
 */
final class DnsCase {
    static final String NAME = "dns: default-deny egress plus allow DNS to kube-dns";
    static final PolicyKey DENY = new PolicyKey("x", "default-deny-egress");
    static final PolicyKey ALLOW_DNS = new PolicyKey("x", "allow-dns");
    static final List<PolicyKey> POLICIES = List.of(DENY, ALLOW_DNS);

    /** {@code from} looks up {@link KubeDns#NAME} through {@link KubeDns#CLUSTER_IP}: answered (the A record) or not at all. */
    record Lookup(String from, boolean tcp, boolean resolves) {}

    /** A probe of {@code sandbox probe}, from pod to pod directly and through the destination's own Service. */
    record Reach(String from, String to, int port, Protocol protocol, boolean allowed) {}

    /** The policies in force after the step (the others of {@link #POLICIES} are deleted) and what must hold then. */
    record Step(int number, String description, List<PolicyKey> policies, List<Lookup> lookups, List<Reach> probes) {}

    private DnsCase() {}

    static List<Step> steps() {
        return List.of(
                new Step(1, "no policy: x/a resolves through the kube-dns ClusterIP", List.of(),
                        List.of(new Lookup("x/a", false, true), new Lookup("x/a", true, true)), List.of()),
                new Step(2, "default-deny egress in x plus allow DNS to kube-dns: DNS resolves, nothing else leaves x/a",
                        List.of(DENY, ALLOW_DNS),
                        List.of(new Lookup("x/a", false, true), new Lookup("x/a", true, true)),
                        List.of(new Reach("x/a", "x/b", 80, Protocol.TCP, false), new Reach("x/a", "y/b", 80, Protocol.TCP, false),
                                new Reach("y/a", "x/a", 80, Protocol.TCP, true))),
                new Step(3, "the DNS rule deleted, default-deny egress left: no answer from x/a; y/a (no policy) resolves",
                        List.of(DENY),
                        List.of(new Lookup("x/a", false, false), new Lookup("x/a", true, false), new Lookup("y/a", false, true)),
                        List.of(new Reach("x/a", "x/b", 80, Protocol.TCP, false))),
                new Step(4, "no policy again: x/a resolves", List.of(),
                        List.of(new Lookup("x/a", false, true), new Lookup("x/a", true, true)),
                        List.of(new Reach("x/a", "x/b", 80, Protocol.TCP, true))));
    }

    /** The policy's manifest, as such policies are commonly written. */
    static String manifest(PolicyKey key) {
        if (key.equals(DENY)) {
            return """
                    apiVersion: networking.k8s.io/v1
                    kind: NetworkPolicy
                    metadata:
                      namespace: x
                      name: default-deny-egress
                    spec:
                      podSelector: {}
                      policyTypes:
                      - Egress
                    """;
        }
        if (key.equals(ALLOW_DNS)) {
            return """
                    apiVersion: networking.k8s.io/v1
                    kind: NetworkPolicy
                    metadata:
                      namespace: x
                      name: allow-dns
                    spec:
                      podSelector: {}
                      policyTypes:
                      - Egress
                      egress:
                      - to:
                        - namespaceSelector:
                            matchLabels:
                              kubernetes.io/metadata.name: kube-system
                          podSelector:
                            matchLabels:
                              k8s-app: kube-dns
                        ports:
                        - protocol: UDP
                          port: 53
                        - protocol: TCP
                          port: 53
                    """;
        }
        throw new IllegalArgumentException("no DNS case policy " + key);
    }
}
