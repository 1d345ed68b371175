package io.npmagent.pipelines.datapath;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.agent.source.manifest.ManifestDirectory;
import io.npmagent.dataplane.eval.ReferenceEvaluator;
import io.npmagent.dataplane.eval.RuleRef;
import io.npmagent.dataplane.eval.Verdict;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The benchmark's manifests mean what the pipeline says they mean, by the reference evaluator: N
 * policies select the server, only the last in name order admits the client (on both benchmark ports),
 * none admits the intruder, no two policies are the same apart from their names, and one more isolates
 * the client's egress and admits the server.
 */
class BenchManifestsTest {
    private static final PodKey SERVER = PodKey.parse(BenchManifests.SERVER);
    private static final PodKey CLIENT = PodKey.parse(BenchManifests.CLIENT);
    private static final PodKey INTRUDER = PodKey.parse(BenchManifests.INTRUDER);

    @TempDir
    Path dir;

    private ClusterState cluster(int policies) throws IOException {
        BenchManifests.write(dir, policies);
        ManifestDirectory.Snapshot snapshot = new ManifestDirectory(dir).scan();
        assertThat(snapshot.problems()).isEmpty();
        return snapshot.state();
    }

    private static Verdict verdict(ClusterState cluster, PodKey from, int port) {
        return new ReferenceEvaluator(cluster).allowed(from, SERVER, false, port, Protocol.TCP);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 10, 100, 1000})
    void onlyTheLastPolicyAdmitsTheClientAndNoneTheIntruder(int n) throws IOException {
        ClusterState cluster = cluster(n);
        assertThat(cluster.policies()).hasSize(BenchManifests.applied(n)).hasSize(n + 1);
        List<PolicyKey> keys = new ArrayList<>(cluster.policies().keySet());
        keys.remove(new PolicyKey(BenchManifests.NAMESPACE, BenchManifests.CLIENT_EGRESS));
        keys.sort(null);
        PolicyKey last = keys.get(n - 1);
        assertThat(last.name()).endsWith("-client");
        for (int port : new int[] {BenchManifests.RATE_PORT, BenchManifests.IPERF_PORT}) {
            Verdict client = verdict(cluster, CLIENT, port);
            assertThat(client.ingress().isolatedBy()).as("every policy selects the server").hasSize(n);
            assertThat(client.ingress().allowedBy()).extracting(RuleRef::policy).containsExactly(last);
            assertThat(client.egress().allowedBy()).as("the client's egress policy admits the server")
                    .extracting(RuleRef::policy).containsExactly(new PolicyKey(BenchManifests.NAMESPACE, BenchManifests.CLIENT_EGRESS));
            assertThat(client.allowed()).isTrue();
            Verdict intruder = verdict(cluster, INTRUDER, port);
            assertThat(intruder.allowed()).as("intruder on %d", port).isFalse();
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {BenchManifests.SHAPES + 1, 1000})
    void everyShapeAppearsAndNoTwoPoliciesAreAlike(int n) throws IOException {
        ClusterState cluster = cluster(n);
        Set<NetworkPolicy> unnamed = new HashSet<>();
        Set<String> shapes = new HashSet<>();
        for (NetworkPolicy p : cluster.policies().values()) {
            if (p.name().equals(BenchManifests.CLIENT_EGRESS)) {
                continue;
            }
            unnamed.add(new NetworkPolicy(p.namespace(), "", p.podSelector(), p.policyTypes(), p.ingress(), p.egress()));
            shapes.add(p.name().substring(p.name().indexOf('-') + 1));
        }
        assertThat(unnamed).hasSize(n);
        assertThat(shapes).hasSize(BenchManifests.SHAPES + 1); // the shapes and the client's
    }

    @org.junit.jupiter.api.Test
    void withoutPoliciesEveryoneReachesTheServer() throws IOException {
        ClusterState cluster = cluster(0);
        assertThat(Files.exists(dir.resolve("policies.yaml"))).isFalse();
        assertThat(cluster.policies()).isEmpty();
        assertThat(Files.readString(dir.resolve("services.yaml"))).contains("clusterIP: " + BenchManifests.SERVICE_IP);
        assertThat(verdict(cluster, CLIENT, BenchManifests.RATE_PORT).allowed()).isTrue();
        assertThat(verdict(cluster, INTRUDER, BenchManifests.RATE_PORT).allowed()).isTrue();
    }
}
