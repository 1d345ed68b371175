package io.npmagent.bpf.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.policy.ClusterEventsForTests;
import io.npmagent.dataplane.policy.PolicyCompiler;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * A render that redoes only the pods a delta touched gives exactly the maps a render from scratch
 * gives, after every event of random clusters (and the changes it reports cover every difference
 * from the render before).
 */
class IncrementalRenderPropertyTest {

    @Provide
    Arbitrary<List<ClusterEvent>> events() {
        return ClusterEventsForTests.event().list().ofMinSize(4).ofMaxSize(40);
    }

    private record Maps(Map<Cidr, Integer> ipcache, Map<PodKey, Rendered.Endpoint> endpoints, Set<PolicyEntry> policy) {
        static Maps of(Rendered r) {
            return new Maps(new HashMap<>(r.ipcache()), new HashMap<>(r.endpoints()), new HashSet<>(r.policy()));
        }
    }

    @Property(tries = 500)
    void anIncrementalRenderEqualsOneFromScratch(@ForAll("events") List<ClusterEvent> events) {
        PolicyCompiler compiler = new PolicyCompiler(null);
        BpfModel model = new BpfModel();
        Maps before = Maps.of(model.render());
        for (ClusterEvent e : events) {
            model.apply(compiler.apply(e).delta());
            Rendered incremental = model.render();
            Maps now = Maps.of(incremental);
            Rendered.Changes changes = incremental.changes();
            Maps scratch = Maps.of(model.renderFromScratch());
            assertThat(now).as("after %s", e).isEqualTo(scratch);
            if (!changes.all()) {
                assertThat(now.ipcache()).as("the ipcache changes only in a full render").isEqualTo(before.ipcache());
                Set<PolicyEntry> differ = new HashSet<>(now.policy());
                differ.addAll(before.policy());
                Set<PolicyEntry> same = new HashSet<>(now.policy());
                same.retainAll(before.policy());
                differ.removeAll(same);
                assertThat(changes.policy()).as("every entry that came or went is reported").containsAll(differ);
                for (PodKey pod : union(now.endpoints().keySet(), before.endpoints().keySet())) {
                    if (!java.util.Objects.equals(now.endpoints().get(pod), before.endpoints().get(pod))) {
                        assertThat(changes.pods()).as("endpoint of %s changed", pod).contains(pod);
                    }
                }
            }
            before = scratch;
        }
    }

    private static <T> Set<T> union(Set<T> a, Set<T> b) {
        Set<T> out = new HashSet<>(a);
        out.addAll(b);
        return out;
    }
}
