package io.npmagent.dataplane.bandwidth;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.desired.LocalPod;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.policy.CompileResult;
import io.npmagent.dataplane.policy.PolicyCompiler;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CongestionAnnotationTest {
    private static final Set<String> NODE = Set.of("reno", "cubic", "bbr");

    private static Pod pod(Map<String, String> annotations) {
        return Pod.builder("shop", "api").ip("10.0.0.2").annotations(annotations).build();
    }

    @Test
    void namesAnAlgorithmTheNodeOffers() {
        CongestionAnnotation.Read r = CongestionAnnotation.read(pod(Map.of(CongestionAnnotation.ANNOTATION, "bbr")), NODE);
        assertThat(r.congestion()).isEqualTo("bbr");
        assertThat(r.errors()).isEmpty();
    }

    @Test
    void noAnnotationIsTheDefault() {
        CongestionAnnotation.Read r = CongestionAnnotation.read(pod(Map.of("other", "bbr")), NODE);
        assertThat(r.congestion()).isNull();
        assertThat(r.errors()).isEmpty();
    }

    @Test
    void anAlgorithmTheNodeLacksIsAnErrorNamingPodAnnotationValueAndWhatThereIs() {
        CongestionAnnotation.Read r = CongestionAnnotation.read(pod(Map.of(CongestionAnnotation.ANNOTATION, "vegas")), NODE);
        assertThat(r.congestion()).isNull();
        assertThat(r.errors()).singleElement().satisfies(e -> assertThat(e.toString()).contains("Pod shop/api",
                "metadata.annotations[npm-agent.io/tcp-congestion]", "\"vegas\"", "not available on this node", "bbr cubic reno"));
    }

    @Test
    void offTheNodeOnlyTheSyntaxIsChecked() {
        assertThat(CongestionAnnotation.read(pod(Map.of(CongestionAnnotation.ANNOTATION, "vegas")), null).congestion()).isEqualTo("vegas");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "BBR", "bbr cubic", "a_name_of_16_chr", "bbr\nINFO all good", "../cubic"})
    void aValueThatIsNoNameIsRefusedWithoutForgingALogLine(String text) {
        CongestionAnnotation.Read r = CongestionAnnotation.read(pod(Map.of(CongestionAnnotation.ANNOTATION, text)), null);
        assertThat(r.congestion()).isNull();
        assertThat(r.errors()).singleElement().satisfies(e -> assertThat(e.toString())
                .contains("Pod shop/api", "no congestion control name").doesNotContain("\n"));
    }

    @Test
    void theCompilerPutsItInThePodsRowAndAChangeIsARowChange() {
        PolicyCompiler compiler = new PolicyCompiler(null, NODE);
        compiler.apply(new ClusterEvent.NamespaceUpserted(new Namespace("shop", Map.of())));
        CompileResult first = compiler.apply(new ClusterEvent.PodUpserted(pod(Map.of(CongestionAnnotation.ANNOTATION, "bbr"))));
        assertThat(first.errors()).isEmpty();
        assertThat(row(compiler).congestion()).isEqualTo("bbr");
        assertThat(compiler.congestionPods()).containsExactly(new PodKey("shop", "api"));

        CompileResult changed = compiler.apply(new ClusterEvent.PodUpserted(pod(Map.of(CongestionAnnotation.ANNOTATION, "cubic"))));
        assertThat(changed.delta().pods()).containsKey(new PodKey("shop", "api"));
        assertThat(row(compiler).congestion()).isEqualTo("cubic");

        CompileResult bad = compiler.apply(new ClusterEvent.PodUpserted(pod(Map.of(CongestionAnnotation.ANNOTATION, "vegas"))));
        assertThat(bad.errors()).singleElement().satisfies(e -> assertThat(e.toString()).contains("\"vegas\""));
        assertThat(row(compiler).congestion()).as("left to the default").isNull();
        assertThat(compiler.congestionPods()).isEmpty();
    }

    private static LocalPod row(PolicyCompiler compiler) {
        return compiler.snapshot().pods().get(new PodKey("shop", "api"));
    }
}
