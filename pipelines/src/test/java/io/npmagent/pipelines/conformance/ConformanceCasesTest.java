package io.npmagent.pipelines.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.desired.DesiredStateInterpreter;
import io.npmagent.dataplane.eval.ReferenceEvaluator;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.policy.PolicyCompiler;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Every conformance case (Kubernetes e2e and cyclonus, as data) through the reference evaluator and
 * through the compiler read back by the desired-state interpreter, step by step, on every probe,
 * all protocols. The compiler sees the steps as the agent would: one event per change, incrementally.
 */
class ConformanceCasesTest {
    static final Path ROOT = Path.of(System.getProperty("conformance.dir", "conformance"));

    @TestFactory
    Stream<DynamicNode> everyCaseStepByStep() throws IOException {
        ConformanceModel model = CaseLoader.loadModel(ROOT.resolve("model.yaml"));
        List<ConformanceCase> cases = CaseLoader.loadCases(ROOT.resolve("cases"));
        return cases.stream().map(c -> DynamicContainer.dynamicContainer(c.name(), steps(model, c)));
    }

    @Test
    void everySharedCaseIsHere() throws IOException {
        assertThat(CaseLoader.loadCases(ROOT.resolve("cases"))).hasSizeGreaterThanOrEqualTo(24);
    }

    private static Stream<DynamicNode> steps(ConformanceModel model, ConformanceCase c) {
        // The steps are cumulative: state is carried from one dynamic test to the next, in order.
        Run run = new Run(c.name(), model);
        return c.steps().stream().map(step -> DynamicTest.dynamicTest(
                "step " + step.number() + ": " + step.description(), () -> run.check(step)));
    }

    /** One case's cluster as it evolves, held by both the evaluator's snapshot and the compiler. */
    private static final class Run {
        private final String name;
        private final PolicyCompiler compiler = new PolicyCompiler(null);
        private ClusterState cluster = ClusterState.EMPTY;

        Run(String name, ConformanceModel model) {
            this.name = name;
            model.asEvents().forEach(this::apply);
        }

        private void apply(ClusterEvent event) {
            cluster = cluster.apply(event);
            assertThat(compiler.apply(event).errors()).as("errors from %s", event).isEmpty();
        }

        void check(ConformanceCase.Step step) {
            step.apply().forEach(this::apply);
            step.delete().forEach(this::apply);
            for (ConformanceCase.ModelChange change : step.modelChanges()) {
                apply(changed(change));
            }
            ReferenceEvaluator evaluator = new ReferenceEvaluator(cluster);
            DesiredStateInterpreter interpreter = new DesiredStateInterpreter(compiler.snapshot());
            List<String> wrong = new ArrayList<>();
            int probes = 0;
            for (ConformanceCase.Probe probe : step.probes()) {
                for (Pod from : cluster.pods().values()) {
                    for (Pod to : cluster.pods().values()) {
                        if (from.key().equals(to.key())) {
                            continue;
                        }
                        boolean expected = step.expected(from.key(), to.key(), probe);
                        boolean byEvaluator = evaluator.allowed(from.key(), to.key(), false, probe.port(), probe.protocol()).allowed();
                        boolean byState = interpreter.allowed(
                                from.ipv4().orElseThrow(), to.ipv4().orElseThrow(), probe.port(), probe.protocol());
                        probes++;
                        if (byEvaluator != expected || byState != expected) {
                            wrong.add(String.format("%s -> %s %s/%d: expected %s, evaluator %s, desired state %s",
                                    from.key(), to.key(), probe.protocol(), probe.port(),
                                    word(expected), word(byEvaluator), word(byState)));
                        }
                    }
                }
            }
            assertThat(probes).isPositive();
            assertThat(wrong).as("%s step %d: probes that disagree", name, step.number()).isEmpty();
        }

        private ClusterEvent changed(ConformanceCase.ModelChange change) {
            if (change.op().equals("add_pod_labels")) {
                Pod pod = cluster.pod(PodKey.parse(change.target())).orElseThrow();
                Map<String, String> labels = new HashMap<>(pod.labels());
                labels.putAll(change.labels());
                return new ClusterEvent.PodUpserted(pod.toBuilder().labels(labels).build());
            }
            Namespace ns = cluster.namespace(change.target());
            Map<String, String> labels = new HashMap<>(ns.labels());
            labels.putAll(change.labels());
            return new ClusterEvent.NamespaceUpserted(new Namespace(ns.name(), labels));
        }

        private static String word(boolean allowed) {
            return allowed ? "allow" : "deny";
        }
    }
}
