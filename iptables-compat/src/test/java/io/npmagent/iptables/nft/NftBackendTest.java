package io.npmagent.iptables.nft;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.exec.CommandRunner;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.iptables.Golden;
import io.npmagent.iptables.model.Family;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link NftBackendContract} over {@link FakeNft}, without root; and, here only, the exact scripts
 * (golden files), which the kernel would take in more than one spelling.
 */
class NftBackendTest extends NftBackendContract {
    private FakeNft fake;

    @Override
    Nft open() {
        fake = new FakeNft();
        return new Nft() {
            @Override
            public CommandRunner runner() {
                return fake;
            }

            @Override
            public List<String> scripts() {
                return fake.scripts;
            }

            @Override
            public void handEdit(String script) {
                assertThat(fake.execute(script).ok()).as("hand edit %s", script).isTrue();
            }

            @Override
            public void refuseRulesOf(String chain) {
                fake.refuse = chain == null ? s -> false : s -> s.contains("add rule inet npm_agent " + chain + " ");
            }

            @Override
            public boolean tableExists() {
                return fake.tableExists();
            }

            @Override
            public void close() {}
        };
    }

    @Test
    void theFirstBatchIsReadBackThenWrittenAsGolden() {
        backend.apply(NftFixtures.wholeCluster());
        Golden.assertMatches("nft/first-apply.nft", last());
        assertThat(fake.lists).as("the first call reads the table back").isEqualTo(1);
    }

    @Test
    void anEditIsWrittenAsGolden() {
        applyCluster();
        apply(new ClusterEvent.PolicyUpserted(NftFixtures.webPolicy(8000, 8200)));
        Golden.assertMatches("nft/edit-policy.nft", last());
    }

    @Test
    void aDeletionIsWrittenAsGolden() {
        applyCluster();
        apply(new ClusterEvent.PolicyDeleted(new PolicyKey("x", "api-egress")));
        apply(new ClusterEvent.PodDeleted(new PodKey("y", "client")));
        Golden.assertMatches("nft/delete-policy-and-pod.nft",
                String.join("", fake.scripts.subList(fake.scripts.size() - 2, fake.scripts.size())));
    }

    @Test
    void hostileNamesAreWrittenAsGolden() {
        backend.apply(new Batch(NftFixtures.hostile()));
        Golden.assertMatches("nft/hostile.nft", last());
    }

    @Test
    void aRuleDeletedByHandIsPutBack() {
        applyCluster();
        NftTable before = held();
        fake.deleteRule(policyChain("x", "web", Direction.INGRESS, Family.IPV4), 2);
        assertThat(backend.reconcile()).isEqualTo(1);
        assertThat(held().sameAs(before)).isTrue();
    }

    /** The tiers over the contract's cluster, one transaction: pod chains and ClusterNetworkPolicy chains. */
    @Test
    void tiersAreWrittenAsGolden() {
        applyCluster();
        applyTiers(io.npmagent.iptables.TierFixtures.overlay());
        Golden.assertMatches("nft/tiers.nft", last());
    }
}
