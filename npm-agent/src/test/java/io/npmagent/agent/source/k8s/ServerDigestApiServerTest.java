package io.npmagent.agent.source.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.harness.process.Await;
import java.io.IOException;
import java.util.Optional;
import java.time.Duration;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.kubernetes.client.openapi.ApiClient;
import io.npmagent.agent.cluster.TestCluster;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cached server digest against a real kube-apiserver: always the digest a full listing gives, the
 * same while nothing is written, a new one after any write of a kind the agent watches.
 */
class ServerDigestApiServerTest {
    @TempDir
    Path tmp;

    @Test
    void theCachedDigestIsTheListedOneAndFollowsEveryWrite() throws Exception {
        try (TestCluster cluster = TestCluster.start(tmp.resolve("cluster"))) {
            ApiClient admin = cluster.controlPlane().admin();
            ServerDigest.Cached cached = new ServerDigest.Cached(admin);
            String first = cached.get();
            assertThat(first).isEqualTo(ServerDigest.of(admin));
            assertThat(cached.get()).as("nothing written: the same").isEqualTo(first);

            cluster.create(new NamespaceBuilder().withNewMetadata().withName("x").endMetadata().build());
            String withNamespace = cached.get();
            assertThat(withNamespace).as("a namespace created").isNotEqualTo(first).isEqualTo(ServerDigest.of(admin));

            cluster.create(new NetworkPolicyBuilder().withNewMetadata().withNamespace("x").withName("deny").endMetadata()
                    .withNewSpec().withNewPodSelector().endPodSelector().withPolicyTypes("Ingress").endSpec().build());
            String withPolicy = cached.get();
            assertThat(withPolicy).as("a policy created").isNotEqualTo(withNamespace).isEqualTo(ServerDigest.of(admin));

            cluster.admin().network().v1().networkPolicies().inNamespace("x").withName("deny").delete();
            String after = awaitChange(cached, withPolicy);
            assertThat(after).as("the policy deleted").isEqualTo(ServerDigest.of(admin));
        }
    }

    /** A delete returns before the object is gone from every list: the digest moves once it is. */
    private static String awaitChange(ServerDigest.Cached cached, String from) {
        return Await.value(Duration.ofSeconds(5), "the digest to change", () -> Optional.of(get(cached)).filter(now -> !now.equals(from)), () -> "");
    }

    private static String get(ServerDigest.Cached cached) {
        try {
            return cached.get();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
