package io.npmagent.dataplane.backend;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class DeltaTrackerTest {

    @Test
    void aReadBackComparesEveryKeyThenOnlyThePendingOnes() {
        DeltaTracker<String, Integer> t = new DeltaTracker<>();
        t.replace(Map.of("a", 1, "gone", 9));
        Map<String, Integer> want = new HashMap<>(Map.of("a", 1, "b", 2));

        DeltaTracker.Delta<String, Integer> d = t.pendingDelta(want.keySet(), want::get);
        assertThat(d.updates()).containsExactly(Map.entry("b", 2));
        assertThat(d.deletions()).containsExactly("gone");
        t.landed(d);
        t.caughtUp();

        want.put("a", 5);
        want.put("c", 3); // wanted, but nobody said it may differ
        t.mayDiffer("a");
        assertThat(t.pendingDelta(want.keySet(), want::get).updates()).containsExactly(Map.entry("a", 5));
    }

    @Test
    void aDeltaKeepsTheOrderOfTheKeysAndSkipsWhatAlreadyHolds() {
        DeltaTracker<String, Boolean> set = DeltaTracker.ofElements(List.of("b", "d"));
        Set<String> want = Set.of("a", "b", "c");

        DeltaTracker.Delta<String, Boolean> d = set.delta(List.of("d", "c", "b", "a"), e -> want.contains(e) ? DeltaTracker.PRESENT : null);

        assertThat(d.updates().keySet()).containsExactly("c", "a");
        assertThat(d.deletions()).containsExactly("d");
        assertThat(d.size()).isEqualTo(3);
    }

    @Test
    void onlyWhatLandedIsBelieved() {
        DeltaTracker<String, Integer> t = new DeltaTracker<>();
        t.replace(Map.of("old", 1));
        DeltaTracker.Delta<String, Integer> d = t.delta(List.of("old", "new"), k -> k.equals("new") ? 2 : null);

        t.updated(d); // the deletions were refused

        assertThat(t.view()).containsOnly(Map.entry("old", 1), Map.entry("new", 2));
        assertThat(t.pendingDiffers(Set.of("new"), k -> k.equals("new") ? 2 : null)).as("after a read-back all is pending").isTrue();
    }

    /** One step of a writer's life: the wanted map changes, and maybe a write lands or a read-back happens. */
    record Step(String key, Integer value, boolean write, boolean readBack) {}

    /**
     * Whatever the order of changes, writes and read-backs, a writer that notes every key it changes
     * finds the kernel equal to what it wants after each write, and its delta is empty then.
     */
    @Property(tries = 300)
    void aWriterThatNotesItsChangesConverges(@ForAll("steps") List<Step> steps) {
        DeltaTracker<String, Integer> t = new DeltaTracker<>();
        Map<String, Integer> kernel = new HashMap<>();
        Map<String, Integer> want = new HashMap<>();
        for (Step s : steps) {
            if (s.value() == null) {
                want.remove(s.key());
            } else {
                want.put(s.key(), s.value());
            }
            t.mayDiffer(s.key());
            if (s.readBack()) {
                t.replace(kernel);
            }
            if (s.write()) {
                DeltaTracker.Delta<String, Integer> d = t.pendingDelta(want.keySet(), want::get);
                kernel.putAll(d.updates());
                d.deletions().forEach(kernel::remove);
                t.landed(d);
                t.caughtUp();
                assertThat(kernel).isEqualTo(want);
                assertThat(t.view()).isEqualTo(kernel);
                assertThat(t.pendingDiffers(want.keySet(), want::get)).isFalse();
            }
        }
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<String> keys = Arbitraries.of("a", "b", "c", "d", "e");
        Arbitrary<Integer> values = Arbitraries.integers().between(0, 3).injectNull(0.3);
        return Combinators.combine(keys, values, Arbitraries.of(true, false), Arbitraries.integers().between(0, 9).map(i -> i == 0))
                .as(Step::new).list().ofMaxSize(40);
    }
}
