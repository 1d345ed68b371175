package io.npmagent.dataplane.tier;

import static io.npmagent.dataplane.model.ClusterPolicyFixtures.admin;
import static io.npmagent.dataplane.model.ClusterPolicyFixtures.baseline;
import static io.npmagent.dataplane.model.PolicyFixtures.match;
import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.model.ClusterNetworkPolicy;
import io.npmagent.dataplane.model.Tier;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class TierOrderTest {

    private static NormalizedClusterPolicy normalized(ClusterNetworkPolicy p) {
        return ClusterPolicyNormalizer.normalize(p);
    }

    @Test
    void lowerPriorityFirstThenByNameWhateverTheInputOrder() {
        List<NormalizedClusterPolicy> policies = new ArrayList<>(List.of(
                normalized(admin("b", 5).subjectNamespaces(match()).build()),
                normalized(admin("a", 5).subjectNamespaces(match()).build()),
                normalized(admin("z", 0).subjectNamespaces(match()).build()),
                normalized(admin("A", 1000).subjectNamespaces(match()).build()),
                normalized(admin("aa", 5).subjectNamespaces(match()).build()),
                normalized(baseline("0", 0).subjectNamespaces(match()).build())));
        for (long seed = 0; seed < 5; seed++) {
            Collections.shuffle(policies, new Random(seed));
            assertThat(TierOrder.inTier(Tier.ADMIN, policies)).extracting(NormalizedClusterPolicy::name)
                    .containsExactly("z", "a", "aa", "b", "A");
            assertThat(TierOrder.inTier(Tier.BASELINE, policies)).extracting(NormalizedClusterPolicy::name).containsExactly("0");
        }
    }

    @Test
    void aPolicyWhosePriorityCannotBeReadIsTriedAtPriorityZero() {
        List<NormalizedClusterPolicy> policies = List.of(
                normalized(admin("a", 0).subjectNamespaces(match()).build()),
                normalized(admin("broken", 1001).subjectNamespaces(match()).build()));
        assertThat(TierOrder.inTier(Tier.ADMIN, policies)).extracting(NormalizedClusterPolicy::name).containsExactly("a", "broken");
        assertThat(TierOrder.inTier(Tier.ADMIN, policies)).extracting(NormalizedClusterPolicy::priority).containsExactly(0, 0);
    }
}
