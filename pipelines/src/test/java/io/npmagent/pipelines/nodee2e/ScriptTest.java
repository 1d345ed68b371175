package io.npmagent.pipelines.nodee2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;

class ScriptTest {
    @Test
    void actionsRunWhenReachedAndANameMayTellWhatTheyFound() throws Throwable {
        List<String> log = new ArrayList<>();
        int[] found = new int[1];
        Script s = new Script()
                .act(() -> log.add("apply"))
                .check("first", () -> log.add("check first"))
                .act(() -> found[0] = 7)
                .check(() -> "found " + found[0], () -> log.add("check found"));
        assertThat(log).isEmpty();
        List<String> names = new ArrayList<>();
        for (DynamicNode n : (Iterable<DynamicNode>) s.stream()::iterator) {
            names.add(n.getDisplayName());
            ((DynamicTest) n).getExecutable().execute();
        }
        assertThat(names).containsExactly("first", "found 7");
        assertThat(log).containsExactly("apply", "check first", "check found");
    }

    @Test
    void theBackendsAreTheLaunchersOrAllFour() {
        System.clearProperty(NodeE2eTest.BACKENDS);
        assertThat(NodeE2eTest.backends()).containsExactly("bpf", "iptables-legacy", "nft", "iptables-nft");
        System.setProperty(NodeE2eTest.BACKENDS, "bpf,nft");
        try {
            assertThat(NodeE2eTest.backends()).containsExactly("bpf", "nft");
        } finally {
            System.clearProperty(NodeE2eTest.BACKENDS);
        }
    }
}
