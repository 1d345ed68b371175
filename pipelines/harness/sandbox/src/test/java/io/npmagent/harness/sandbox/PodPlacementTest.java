package io.npmagent.harness.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PodPlacementTest {
    private final PodPlacement placement = new PodPlacement(List.of("n0", "n1", "n2"));

    @Test
    void podsWithoutANodeGoRoundRobinInTheOrderAppliedAndStayPut() {
        assertThat(placement.place("x/a", null)).isEqualTo("n0");
        assertThat(placement.place("x/b", "")).isEqualTo("n1");
        assertThat(placement.place("x/c", null)).isEqualTo("n2");
        assertThat(placement.place("x/d", null)).isEqualTo("n0");
        // Applied again (every pass applies every object): the same nodes, the turn does not move.
        assertThat(placement.place("x/b", null)).isEqualTo("n1");
        assertThat(placement.place("x/a", null)).isEqualTo("n0");
        assertThat(placement.place("x/e", null)).isEqualTo("n1");
    }

    @Test
    void aPodNamingOneOfTheNodesGoesThereAndTakesNoTurn() {
        assertThat(placement.place("x/a", "n2")).isEqualTo("n2");
        assertThat(placement.place("x/b", null)).isEqualTo("n0");
        // Its manifest now names another node: it goes there (the applier recreates it, as a controller would).
        assertThat(placement.place("x/a", "n1")).isEqualTo("n1");
    }

    @Test
    void podsNamingAForeignNodeShareTheNodeThatStandsInForIt() {
        assertThat(placement.place("shop/web", "node-a")).isEqualTo("n0");
        assertThat(placement.place("shop/db", "node-b")).isEqualTo("n1");
        assertThat(placement.place("shop/api", "node-a")).isEqualTo("n0");
        assertThat(placement.place("shop/cache", "node-b")).isEqualTo("n1");
        assertThat(placement.place("x/free", null)).isEqualTo("n2");
    }

    @Test
    void aPodThatLeftIsPlacedAnewAndAdoptedPodsStayWhereTheServerHasThem() {
        placement.place("x/a", null);
        placement.place("x/b", null);
        placement.retain(Set.of("x/b"));
        assertThat(placement.placed("x/a")).isFalse();
        assertThat(placement.place("x/a", null)).isEqualTo("n2");

        PodPlacement restarted = new PodPlacement(List.of("n0", "n1", "n2"));
        restarted.adopt("x/b", null, "n1");
        restarted.adopt("shop/web", "node-a", "n2");
        restarted.adopt("x/elsewhere", null, "not-ours");
        assertThat(restarted.place("x/b", null)).isEqualTo("n1");
        assertThat(restarted.place("shop/api", "node-a")).as("follows its node's stand-in").isEqualTo("n2");
        assertThat(restarted.placed("x/elsewhere")).isFalse();
    }

    @Test
    void aSandboxHasANode() {
        assertThatThrownBy(() -> new PodPlacement(List.of())).isInstanceOf(IllegalArgumentException.class);
    }
}
