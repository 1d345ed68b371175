package io.npmagent.iptables.nft;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.iptables.model.Family;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Planning: what differs is written, in an order the kernel accepts, and nothing else. */
class NftTableTest {
    private static final String POD = "pod_in4_aaaaaaaaaaaaaaaa";
    private static final String POL = "pol_in4_aaaaaaaaaaaaaaaa";
    private static final String SET = "s4_aaaaaaaaaaaaaaaaaaaa";

    private static List<NftRules.Line> lines(String chain, String... bodies) {
        return NftRules.lines(chain, Arrays.stream(bodies).map(b -> new NftRules.Rule(b, "")).toList());
    }

    private static NftTable.Wanted small(boolean full) {
        NftTable.Wanted w = new NftTable.Wanted(full);
        w.chain("egress", NftBackend.baseHook(Direction.EGRESS), lines("egress", "ct state established,related accept"));
        w.chain(POD, null, lines(POD, "jump " + POL, "drop"));
        w.chain(POL, null, lines(POL, "ip saddr @" + SET + " accept"));
        w.set(SET, NftSetSpec.addresses(Family.IPV4), Set.of("10.0.0.1", "10.0.0.2"));
        w.set("ingress4", NftSetSpec.dispatch(Family.IPV4), Set.of("10.0.0.9 : jump " + POD));
        return w;
    }

    private static List<String> statements(NftTable.Plan plan) {
        return plan.script().lines().toList();
    }

    @Test
    void anEmptyTableGetsEverythingInOneOrderedTransaction() {
        NftTable t = new NftTable();
        NftTable.Plan plan = t.plan(small(true));
        List<String> s = statements(plan);
        assertThat(s.get(0)).isEqualTo("add table inet npm_agent");
        assertThat(s).contains("add chain inet npm_agent egress { type filter hook forward priority 1; policy accept; }",
                "add set inet npm_agent " + SET + " { type ipv4_addr; }",
                "add map inet npm_agent ingress4 { type ipv4_addr : verdict; }",
                "add element inet npm_agent " + SET + " { 10.0.0.1, 10.0.0.2 }");
        // Declared before anything jumps or maps to them; sets exist before a rule names them.
        assertThat(s.indexOf("add chain inet npm_agent " + POL)).isLessThan(s.indexOf("add element inet npm_agent ingress4 { 10.0.0.9 : jump " + POD + " }"));
        assertThat(s.indexOf("add set inet npm_agent " + SET + " { type ipv4_addr; }"))
                .isLessThan(indexOfStart(s, "add rule inet npm_agent " + POL));
        assertThat(indexOfStart(s, "add rule inet npm_agent " + POD + " jump")).isGreaterThan(s.indexOf("add chain inet npm_agent " + POL));
        assertThat(plan.changes()).isEqualTo(5);

        t.committed(plan);
        assertThat(t.plan(small(true)).isEmpty()).as("applied again: nothing to do").isTrue();
        assertThat(t.rules()).isEqualTo(4);
        assertThat(t.setCount()).as("maps are not peer sets").isEqualTo(1);
        assertThat(t.elements()).isEqualTo(2);
    }

    private static int indexOfStart(List<String> s, String prefix) {
        for (int i = 0; i < s.size(); i++) {
            if (s.get(i).startsWith(prefix)) {
                return i;
            }
        }
        return -1;
    }

    @Test
    void goingAwayIsOrderedTheOtherWay() {
        NftTable t = new NftTable();
        t.committed(t.plan(small(true)));
        NftTable.Wanted w = new NftTable.Wanted(false);
        w.set("ingress4", NftSetSpec.dispatch(Family.IPV4), Set.of());
        w.dropChain(POD);
        w.dropChain(POL);
        w.dropSet(SET);
        List<String> s = statements(t.plan(w));
        assertThat(s).containsExactly(
                "add table inet npm_agent",
                "flush chain inet npm_agent " + POD,
                "flush chain inet npm_agent " + POL,
                "delete element inet npm_agent ingress4 { 10.0.0.9 }",
                "delete chain inet npm_agent " + POD,
                "delete chain inet npm_agent " + POL,
                "delete set inet npm_agent " + SET);
    }

    @Test
    void aMapElementWhoseVerdictChangesIsDeletedThenAdded() {
        NftTable t = new NftTable();
        t.committed(t.plan(small(true)));
        NftTable.Wanted w = new NftTable.Wanted(false);
        w.set("ingress4", NftSetSpec.dispatch(Family.IPV4), Set.of("10.0.0.9 : jump " + POL));
        assertThat(statements(t.plan(w))).containsExactly(
                "add table inet npm_agent",
                "delete element inet npm_agent ingress4 { 10.0.0.9 }",
                "add element inet npm_agent ingress4 { 10.0.0.9 : jump " + POL + " }");
    }

    @Test
    void incrementalElementsCompareOnlyWhatMayHaveChanged() {
        NftTable t = new NftTable();
        t.committed(t.plan(small(true)));
        NftTable.Wanted w = new NftTable.Wanted(false);
        w.elements(SET, Set.of("10.0.0.1", "10.0.0.3", "10.0.0.4"), Set.of("10.0.0.3"));
        NftTable.Plan plan = t.plan(w);
        assertThat(statements(plan)).containsExactly(
                "add table inet npm_agent",
                "delete element inet npm_agent " + SET + " { 10.0.0.1 }",
                "add element inet npm_agent " + SET + " { 10.0.0.3 }");
        t.committed(plan);
        assertThat(t.elements()).isEqualTo(2);
        assertThat(t.plan(w).isEmpty()).as("once committed, the same change writes nothing").isTrue();
        NftTable.Wanted back = new NftTable.Wanted(false);
        back.elements(SET, Set.of("10.0.0.3"), Set.of());
        assertThat(statements(t.plan(back))).as("and its undoing writes it back")
                .containsExactly("add table inet npm_agent", "delete element inet npm_agent " + SET + " { 10.0.0.3 }");
    }

    @Test
    void aChainIsRewrittenWholeWhenAHashDiffers() {
        NftTable t = new NftTable();
        t.committed(t.plan(small(true)));
        NftTable.Wanted w = new NftTable.Wanted(false);
        w.chain(POL, null, lines(POL, "ip saddr @" + SET + " tcp dport 80 accept"));
        List<String> s = statements(t.plan(w));
        assertThat(s).hasSize(4).startsWith("add table inet npm_agent", "add chain inet npm_agent " + POL,
                "flush chain inet npm_agent " + POL);
        assertThat(s.get(3)).startsWith("add rule inet npm_agent " + POL + " ip saddr @" + SET + " tcp dport 80 accept comment \"npm:");
    }

    @Test
    void readBackDriftIsRepairedAndOrphansGo() {
        NftTable t = new NftTable();
        t.load(NftListingTest.LISTING);
        NftTable.Wanted w = new NftTable.Wanted(true);
        w.chain(POD, null, lines(POD, "jump " + POL, "drop"));
        w.chain(POL, null, List.of());
        w.set("c4_aaaaaaaaaaaaaaaaaaaa", NftSetSpec.prefixes(Family.IPV4), Set.of("0.0.0.0/1", "128.0.0.0/1"));
        List<String> s = statements(t.plan(w));
        assertThat(s).contains(
                "flush chain inet npm_agent " + POD,
                "delete element inet npm_agent c4_aaaaaaaaaaaaaaaaaaaa { 10.9.9.9 }",
                "flush chain inet npm_agent egress",
                "delete chain inet npm_agent egress",
                "delete map inet npm_agent ingress4",
                "delete set inet npm_agent n4_aaaaaaaaaaaaaaaaaaaa",
                "delete set inet npm_agent handle 12");
        assertThat(s).as("a name the agent does not make is never spelled into a script").noneMatch(l -> l.contains("hand_made"));
    }

    @Test
    void aSetOfTheWrongTypeIsReplacedAndEveryChainRewritten() {
        NftTable t = new NftTable();
        t.load(NftListingTest.LISTING);
        NftTable.Wanted w = new NftTable.Wanted(true);
        w.chain(POD, null, lines(POD, "jump " + POL, "drop"));
        w.chain(POL, null, List.of());
        w.chain("egress", NftBackend.baseHook(Direction.EGRESS), List.of());
        // Read back as an interval set; wanted as a plain one.
        w.set("c4_aaaaaaaaaaaaaaaaaaaa", NftSetSpec.addresses(Family.IPV4), Set.of("10.0.0.1"));
        List<String> s = statements(t.plan(w));
        assertThat(s).contains("flush chain inet npm_agent egress", "flush chain inet npm_agent " + POD,
                "delete set inet npm_agent c4_aaaaaaaaaaaaaaaaaaaa",
                "add set inet npm_agent c4_aaaaaaaaaaaaaaaaaaaa { type ipv4_addr; }");
        assertThat(s.indexOf("flush chain inet npm_agent egress")).isLessThan(s.indexOf("delete set inet npm_agent c4_aaaaaaaaaaaaaaaaaaaa"));
        assertThat(s.indexOf("delete set inet npm_agent c4_aaaaaaaaaaaaaaaaaaaa"))
                .isLessThan(s.indexOf("add set inet npm_agent c4_aaaaaaaaaaaaaaaaaaaa { type ipv4_addr; }"));

        NftTable.Wanted partial = new NftTable.Wanted(false);
        partial.set("c4_aaaaaaaaaaaaaaaaaaaa", NftSetSpec.addresses(Family.IPV4), Set.of("10.0.0.1"));
        assertThat(t.plan(partial).needsFullSync()).as("only a full comparison has every chain at hand").isTrue();
    }

    @Test
    void aBaseChainOnTheWrongPriorityIsReplaced() {
        NftTable t = new NftTable();
        t.load(NftListingTest.LISTING);
        NftTable.Wanted w = new NftTable.Wanted(false);
        w.chain("egress", NftBackend.baseHook(Direction.INGRESS), List.of());
        assertThat(statements(t.plan(w))).containsExactly(
                "add table inet npm_agent",
                "flush chain inet npm_agent egress",
                "delete chain inet npm_agent egress",
                "add chain inet npm_agent egress { type filter hook forward priority 2; policy accept; }",
                "flush chain inet npm_agent egress");
    }

    @Test
    void sameAsIgnoresHandles() {
        NftTable a = new NftTable();
        a.load(NftListingTest.LISTING);
        NftTable b = new NftTable();
        b.load(NftListingTest.LISTING.replace("\"handle\": 11", "\"handle\": 99"));
        assertThat(a.sameAs(b)).isTrue();
        NftTable c = new NftTable();
        c.load(NftListingTest.LISTING.replace("10.9.9.9", "10.9.9.8"));
        assertThat(a.sameAs(c)).isFalse();
        assertThat(a.sameAs(new NftTable())).isFalse();
    }
}
