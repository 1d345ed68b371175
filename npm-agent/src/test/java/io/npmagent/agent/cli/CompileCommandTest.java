package io.npmagent.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code compile} on the shipped example: what its policies say must be what the matrix shows. */
class CompileCommandTest {
    /** Surefire runs in the module directory. */
    static final String SHOP = Path.of("examples", "shop").toString();

    private static CliRun run;
    private static Matrix matrix;

    @BeforeAll
    static void compileTheExample() {
        run = CliRun.of("compile", "--manifests", SHOP);
        matrix = new Matrix(run.out());
    }

    private static char v4(String port, String from, String to) {
        return matrix.cell("IPv4", port, from, to);
    }

    @Test
    void exampleCompilesCleanly() {
        assertThat(run.exitCode()).isZero();
        assertThat(run.err()).isEmpty();
        assertThat(run.out()).contains("# problems in the input: none")
                .contains("3 namespaces, 5 pods, 8 policies, 3 ClusterNetworkPolicies")
                .contains("# desired state (every pod local)")
                .contains("\npolicies:\n  data/cache-from-api isolates [INGRESS]")
                .contains("  shop/api [10.244.1.11, fd00:10:244:1::11] identity=");
    }

    @Test
    void databaseIsReachableOnlyFromTheApi() {
        assertThat(v4("TCP/5432", "shop/api", "data/db")).isEqualTo('.');
        assertThat(v4("TCP/5432", "shop/frontend", "data/db")).isEqualTo('X');
        assertThat(v4("TCP/5432", "data/cache", "data/db")).isEqualTo('X');
        assertThat(v4("TCP/5432", "monitoring/prometheus", "data/db")).isEqualTo('X');
        // The same policies hold over IPv6: selectors are not per family.
        assertThat(matrix.cell("IPv6", "TCP/5432", "shop/api", "data/db")).isEqualTo('.');
        assertThat(matrix.cell("IPv6", "TCP/5432", "monitoring/prometheus", "data/db")).isEqualTo('X');
    }

    @Test
    void apiServesTheFrontendOnItsNamedPortAndMonitoringOnMetrics() {
        assertThat(v4("TCP/8080", "shop/frontend", "shop/api")).isEqualTo('.');
        assertThat(v4("TCP/8080", "data/db", "shop/api")).isEqualTo('X');
        assertThat(v4("TCP/8080", "monitoring/prometheus", "shop/api")).isEqualTo('X');
        assertThat(v4("TCP/9100", "monitoring/prometheus", "shop/api")).isEqualTo('.');
        assertThat(v4("TCP/9100", "shop/frontend", "shop/api")).isEqualTo('X');
    }

    @Test
    void frontendIsOpenToAllButTheApiWhoseEgressIsLimited() {
        assertThat(v4("TCP/8080", "data/db", "shop/frontend")).isEqualTo('.');
        assertThat(v4("TCP/8080", "monitoring/prometheus", "shop/frontend")).isEqualTo('.');
        assertThat(v4("TCP/8080", "shop/api", "shop/frontend")).isEqualTo('X');
        assertThat(v4("TCP/9090", "shop/api", "monitoring/prometheus")).isEqualTo('X');
        assertThat(v4("TCP/6379", "shop/api", "data/cache")).isEqualTo('.');
        assertThat(v4("TCP/6379", "shop/frontend", "data/cache")).isEqualTo('X');
    }

    /** The cluster's operators' rules: monitoring apart by default (Baseline: no NetworkPolicy isolates it). */
    @Test
    void clusterNetworkPoliciesDecideAroundTheNamespacesPolicies() {
        assertThat(v4("TCP/9090", "shop/frontend", "monitoring/prometheus")).isEqualTo('X');
        assertThat(v4("TCP/9090", "data/db", "monitoring/prometheus")).isEqualTo('X');
        assertThat(run.out()).contains("  monitoring/prometheus [10.244.3.30, fd00:10:244:3::30]")
                .contains("baseline{ingress=[monitoring-apart-by-default], egress=[]}")
                .contains("clusterPolicies:\n  monitoring-apart-by-default\n");
        CliRun explain = CliRun.of("explain", "--manifests", SHOP, "--from", "shop/frontend", "--to", "monitoring/prometheus", "--port", "9090");
        assertThat(explain.out()).contains("DENIED by Baseline cnp/monitoring-apart-by-default ingress[1] \"from-elsewhere\", Deny");
    }

    @Test
    void cellsThatDoNotApplyAreDashesAndMissingFamiliesHaveNoCells() {
        assertThat(v4("TCP/5432", "shop/api", "shop/api")).isEqualTo('-');
        assertThat(v4("TCP/5432", "shop/api", "shop/frontend")).isEqualTo('-'); // frontend does not serve 5432
        assertThat(matrix.cell("IPv6", "TCP/8080", "shop/frontend", "shop/api")).isNull(); // frontend is IPv4-only
        assertThat(matrix.cell("IPv6", "TCP/6379", "shop/api", "data/cache")).isNull();
        assertThat(run.out()).contains("9 allowed, 23 denied");
    }

    @Test
    void nodeLimitsTheLocalPods() {
        CliRun nodeB = CliRun.of("compile", "--manifests", SHOP, "--node", "node-b");

        assertThat(nodeB.exitCode()).isZero();
        String pods = nodeB.out().substring(nodeB.out().indexOf("\npods:\n"), nodeB.out().indexOf("# reachability"));
        assertThat(pods).contains("  data/db ", "  data/cache ").doesNotContain("shop/", "monitoring/");
        assertThat(nodeB.out()).contains("# desired state (node node-b)");
    }

    @Test
    void problemsAreListedEverythingIsStillPrintedAndTheExitCodeIsOne(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("a.yaml"), """
                apiVersion: v1
                kind: Pod
                metadata: {name: a, namespace: x, labels: {app: a}}
                spec: {containers: [{name: c, ports: [{containerPort: 80}]}]}
                status: {podIP: 10.0.0.1}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {name: b, namespace: x}
                spec: {containers: [{name: c, ports: [{containerPort: 80}]}]}
                status: {podIP: 10.0.0.2}
                ---
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: d}
                ---
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicy
                metadata: {name: bad, namespace: x}
                spec:
                  podSelector: {matchLabels: {app: a}}
                  ingress: [{from: [{ipBlock: {cidr: not-a-cidr}}]}]
                """);

        CliRun bad = CliRun.of("compile", "--manifests", dir.toString());

        assertThat(bad.exitCode()).isEqualTo(1);
        assertThat(bad.out()).contains("# problems in the input: 2")
                .contains("a.yaml document 3 (Deployment d): unsupported kind")
                .contains("NetworkPolicy x/bad: spec.ingress[0].from[0].ipBlock");
        // The invalid peer fails closed: x/a is isolated and nothing admits x/b.
        assertThat(new Matrix(bad.out()).cell("IPv4", "TCP/80", "x/b", "x/a")).isEqualTo('X');
        assertThat(new Matrix(bad.out()).cell("IPv4", "TCP/80", "x/a", "x/b")).isEqualTo('.');
        assertThat(bad.err()).contains("2 problem(s) in the input");
    }

    @Test
    void missingDirectoryIsAUsageError(@TempDir Path dir) {
        CliRun missing = CliRun.of("compile", "--manifests", dir.resolve("nope").toString());

        assertThat(missing.exitCode()).isEqualTo(2);
        assertThat(missing.out()).isEmpty();
        assertThat(missing.err()).contains("cannot read --manifests").contains("nope");
    }

    @Test
    void hostileNamesStayOnTheirLine(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("p.yaml"), """
                apiVersion: v1
                kind: Pod
                metadata: {name: "a\\n   9 forged/row  - . -", namespace: x}
                spec: {containers: [{name: c, ports: [{containerPort: 80}]}]}
                status: {podIP: 10.0.0.1}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {name: b, namespace: x}
                spec: {containers: [{name: c, ports: [{containerPort: 80}]}]}
                status: {podIP: 10.0.0.2}
                """);

        CliRun hostile = CliRun.of("compile", "--manifests", dir.toString());

        String matrixPart = hostile.out().substring(hostile.out().indexOf("# reachability"));
        assertThat(matrixPart).contains("x/\"a\\n   9 forged/row  - . -\"").doesNotContain("\n   9 forged");
    }
}
