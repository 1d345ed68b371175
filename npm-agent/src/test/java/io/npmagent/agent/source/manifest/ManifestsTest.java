package io.npmagent.agent.source.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.ContainerPort;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.LabelSelector;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManifestsTest {

    private static final String NAMESPACE = """
            apiVersion: v1
            kind: Namespace
            metadata:
              name: shop
              labels: {team: web}
            """;

    private static String pod(String namespace, String name, String app) {
        return """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: %s
                  namespace: %s
                  labels: {app: %s}
                spec:
                  containers:
                    - name: c
                      ports:
                        - {name: http, containerPort: 8080}
                status:
                  podIP: 10.0.0.1
                """.formatted(name, namespace, app);
    }

    private static final String POLICY = """
            apiVersion: networking.k8s.io/v1
            kind: NetworkPolicy
            metadata: {name: allow, namespace: shop}
            spec:
              podSelector: {matchLabels: {app: api}}
              ingress:
                - from: [{podSelector: {}}]
                  ports: [{port: http}, {port: 80, endPort: 90, protocol: UDP}]
            """;

    @Test
    void parsesSeveralDocumentsOfEachKind() {
        String stream = "# leading comment\n---\n" + NAMESPACE + "---\n# only a comment\n---\n"
                + pod("shop", "api", "api") + "--- # separator with a comment\n" + POLICY + "---\n";

        ParsedManifests parsed = Manifests.parse(stream, "x.yaml");

        assertThat(parsed.errors()).isEmpty();
        assertThat(parsed.namespaces()).containsExactly(new Namespace("shop", Map.of("team", "web")));
        assertThat(parsed.pods()).hasSize(1);
        Pod api = parsed.pods().get(0);
        assertThat(api.key()).isEqualTo(new PodKey("shop", "api"));
        assertThat(api.ips()).containsExactly(IpAddress.parse("10.0.0.1"));
        assertThat(api.ports()).containsExactly(new ContainerPort("http", 8080, Protocol.TCP));
        assertThat(parsed.policies()).containsExactly(new NetworkPolicy(
                "shop", "allow",
                LabelSelector.matchLabels(Map.of("app", "api")),
                List.of(),
                List.of(new NetworkPolicy.Rule(
                        List.of(new NetworkPolicy.Peer(LabelSelector.EMPTY, null, null)),
                        List.of(new NetworkPolicy.Port(null, NetworkPolicy.PortValue.name("http"), null),
                                new NetworkPolicy.Port("UDP", NetworkPolicy.PortValue.number(80), 90)))),
                List.of()));
    }

    @Test
    void jsonDocumentsLoadToo() {
        String json = """
                {"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "j", "namespace": "n", "labels": {"a": "1"}},
                 "spec": {"containers": [{"name": "c"}]}, "status": {"podIPs": [{"ip": "fd00::1"}]}}
                """;

        ParsedManifests parsed = Manifests.parse(json, "p.json");

        assertThat(parsed.errors()).isEmpty();
        assertThat(parsed.pods()).singleElement().satisfies(p -> {
            assertThat(p.labels()).containsExactly(Map.entry("a", "1"));
            assertThat(p.ips()).containsExactly(IpAddress.parse("fd00::1"));
        });
    }

    @Test
    void aServiceIsAcceptedAndChangesNothing() {
        String service = """
                apiVersion: v1
                kind: Service
                metadata: {name: api, namespace: shop}
                spec: {selector: {app: api}, ports: [{port: 80, targetPort: http}]}
                """;
        ParsedManifests parsed = Manifests.parse(NAMESPACE + "---\n" + service + "---\n" + pod("shop", "api", "api"), "shop/app.yaml");

        assertThat(parsed.errors()).isEmpty();
        assertThat(parsed.pods()).hasSize(1);
        assertThat(parsed.policies()).isEmpty();
    }

    @Test
    void unsupportedKindIsAnErrorNamingTheDocumentAndTheRestLoads() {
        String deployment = """
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: x, namespace: web}
                """;
        String stream = NAMESPACE + "---\n" + deployment + "---\n" + pod("shop", "api", "api");

        ParsedManifests parsed = Manifests.parse(stream, "shop/app.yaml");

        assertThat(parsed.errors()).singleElement().asString()
                .startsWith("shop/app.yaml document 2 (Deployment web/x): unsupported kind");
        assertThat(parsed.namespaces()).hasSize(1);
        assertThat(parsed.pods()).hasSize(1);
    }

    @Test
    void wrongApiVersionIsAnError() {
        String old = POLICY.replace("networking.k8s.io/v1", "extensions/v1beta1");

        ParsedManifests parsed = Manifests.parse(old, "p.yaml");

        assertThat(parsed.policies()).isEmpty();
        assertThat(parsed.errors()).singleElement().asString()
                .startsWith("p.yaml document 1 (NetworkPolicy shop/allow): apiVersion extensions/v1beta1 unsupported");
    }

    @Test
    void brokenDocumentDoesNotStopTheNextOne() {
        String stream = NAMESPACE + "---\nkind: Pod\nmetadata: {name: [unclosed\n---\n" + pod("shop", "api", "api");

        ParsedManifests parsed = Manifests.parse(stream, "s.yaml");

        assertThat(parsed.errors()).singleElement().asString()
                .startsWith("s.yaml document 2: invalid YAML:")
                .endsWith("(line 9, column 1)");
        assertThat(parsed.pods()).extracting(Pod::name).containsExactly("api");
    }

    @Test
    void brokenFileDoesNotStopTheOthers(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("a-broken.yaml"), "kind: Pod\n  metadata: : :\n\t- bad");
        Files.writeString(dir.resolve("b-pods.yml"), pod("shop", "api", "api"));
        Files.writeString(dir.resolve("c-policy.json"), "{\"apiVersion\":\"networking.k8s.io/v1\","
                + "\"kind\":\"NetworkPolicy\",\"metadata\":{\"name\":\"deny\"},\"spec\":{\"podSelector\":{}}}");
        Files.write(dir.resolve("d-latin1.yaml"), "name: caf\u00e9".getBytes(StandardCharsets.ISO_8859_1));
        Files.writeString(dir.resolve("notes.txt"), "kind: Pod");
        Files.writeString(dir.resolve(".hidden.yaml"), "kind: Pod");
        Files.createDirectory(dir.resolve("sub.yaml"));

        ParsedManifests parsed = Manifests.load(dir);

        String name = dir.getFileName().toString();
        assertThat(parsed.errors()).hasSize(2);
        assertThat(parsed.errors().get(0)).startsWith(name + "/a-broken.yaml document 1: invalid YAML:");
        assertThat(parsed.errors().get(1)).isEqualTo(name + "/d-latin1.yaml: cannot read: not UTF-8 text");
        assertThat(parsed.pods()).extracting(Pod::key).containsExactly(new PodKey("shop", "api"));
        assertThat(parsed.policies()).extracting(NetworkPolicy::key).containsExactly(new PolicyKey("default", "deny"));
    }

    @Test
    void loadRefusesSomethingThatIsNotADirectory(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("f.yaml"), NAMESPACE);
        assertThatThrownBy(() -> Manifests.load(file)).isInstanceOf(NotDirectoryException.class);
        assertThatThrownBy(() -> Manifests.load(dir.resolve("missing"))).isInstanceOf(NotDirectoryException.class);
    }

    @Test
    void duplicateObjectIsAnErrorNamingBothPlacesAndTheLaterWins(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("1.yaml"), pod("shop", "api", "old"));
        Files.writeString(dir.resolve("2.yaml"), NAMESPACE + "---\n" + pod("shop", "api", "new"));

        ParsedManifests parsed = Manifests.load(dir);

        String name = dir.getFileName().toString();
        assertThat(parsed.errors()).containsExactly("duplicate Pod shop/api in " + name + "/1.yaml document 1 and "
                + name + "/2.yaml document 2: the later one is used");
        assertThat(parsed.pods()).singleElement().extracting(Pod::labels).isEqualTo(Map.of("app", "new"));
    }

    @Test
    void sameNameOfDifferentKindsOrNamespacesIsNoDuplicate() {
        String stream = pod("a", "x", "1") + "---\n" + pod("b", "x", "1") + "---\n"
                + POLICY.replace("name: allow", "name: x") + "---\n" + NAMESPACE.replace("shop", "x");

        ParsedManifests parsed = Manifests.parse(stream, "s.yaml");

        assertThat(parsed.errors()).isEmpty();
        assertThat(parsed.pods()).hasSize(2);
    }

    @Test
    void hostileTextRoundTripsExactly() {
        String yaml = """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: "we\\"ird\\nname"
                  namespace: 'it''s'
                  labels:
                    quote: "a\\"b'c"
                    newline: "line1\\nline2\\r\\n"
                    dashes: "--"
                    separator: "---"
                    shell: "$(reboot)"
                    backtick: "`id`; rm -rf /"
                    unicode: "caf\\u00e9 \\u2028 \\U0001F600 \\u202e"
                    nul: "\\0"
                    number: 1.10
                    octal: 007
                    word: on
                    yes: yes
                    empty: ""
                    tilde: ~
                  annotations:
                    kubernetes.io/ingress-bandwidth: |
                      first
                      --- not a separator
                      # not a comment
                    kubernetes.io/egress-bandwidth: >-
                      a
                      b
                    unread: "the model keeps only the annotations the agent reads"
                spec: {containers: [{name: c}]}
                """;

        ParsedManifests parsed = Manifests.parse(yaml, "h.yaml");

        assertThat(parsed.errors()).isEmpty();
        Pod pod = parsed.pods().get(0);
        assertThat(pod.key()).isEqualTo(new PodKey("it's", "we\"ird\nname"));
        assertThat(pod.labels()).isEqualTo(Map.ofEntries(
                Map.entry("quote", "a\"b'c"),
                Map.entry("newline", "line1\nline2\r\n"),
                Map.entry("dashes", "--"),
                Map.entry("separator", "---"),
                Map.entry("shell", "$(reboot)"),
                Map.entry("backtick", "`id`; rm -rf /"),
                Map.entry("unicode", "caf\u00e9 \u2028 \uD83D\uDE00 \u202e"),
                Map.entry("nul", "\0"),
                Map.entry("number", "1.10"),
                Map.entry("octal", "007"),
                Map.entry("word", "on"),
                Map.entry("yes", "yes"),
                Map.entry("empty", ""),
                Map.entry("tilde", "")));
        assertThat(pod.annotations()).isEqualTo(Map.of(
                "kubernetes.io/ingress-bandwidth", "first\n--- not a separator\n# not a comment\n",
                "kubernetes.io/egress-bandwidth", "a b"));
    }

    @Test
    void hostileNamesAreQuotedInMessagesAndEveryProblemIsOneLine() {
        String yaml = """
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: "x\\nshop/app.yaml document 9: forged", namespace: web}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {name: "evil\\nline", namespace: ns}
                spec: {containers: [{name: c, ports: [{containerPort: 80, protocol: "T\\nCP"}]}]}
                """;

        ParsedManifests parsed = Manifests.parse(yaml, "h.yaml");

        assertThat(parsed.errors()).hasSize(2).allSatisfy(e -> assertThat(e).doesNotContain("\n"));
        assertThat(parsed.errors().get(0)).contains("\"x\\nshop/app.yaml document 9: forged\"");
        assertThat(parsed.errors().get(1))
                .startsWith("h.yaml document 2: Pod ns/evil\\nline: spec.containers[0].ports[0].protocol:");
        assertThat(parsed.pods()).extracting(Pod::name).containsExactly("evil\nline");
    }

    @Test
    void missingNamespaceIsDefault() {
        String yaml = pod("x", "p", "a").replace("  namespace: x\n", "") + "---\n"
                + POLICY.replace("namespace: shop", "namespace: \"\"");

        ParsedManifests parsed = Manifests.parse(yaml, "d.yaml");

        assertThat(parsed.errors()).isEmpty();
        assertThat(parsed.pods()).extracting(Pod::key).containsExactly(new PodKey("default", "p"));
        assertThat(parsed.policies()).extracting(NetworkPolicy::key).containsExactly(new PolicyKey("default", "allow"));
    }

    @Test
    void podConversionErrorsAreReportedAndThePodIsKept() {
        String yaml = """
                apiVersion: v1
                kind: Pod
                metadata: {name: api, namespace: shop}
                spec:
                  containers:
                    - name: c
                      ports: [{containerPort: 80}, {containerPort: 81, protocol: ICMP}]
                status:
                  podIPs: [{ip: 10.0.0.1}, {ip: 999.0.0.1}]
                """;

        ParsedManifests parsed = Manifests.parse(yaml, "p.yaml");

        assertThat(parsed.errors()).containsExactly(
                "p.yaml document 1: Pod shop/api: status.podIPs[1].ip: invalid value \"999.0.0.1\": "
                        + "must be a valid IP address",
                "p.yaml document 1: Pod shop/api: spec.containers[0].ports[1].protocol: unsupported value \"ICMP\": "
                        + "supported values: \"SCTP\", \"TCP\", \"UDP\"");
        assertThat(parsed.pods()).singleElement().satisfies(p -> {
            assertThat(p.ips()).containsExactly(IpAddress.parse("10.0.0.1"));
            assertThat(p.ports()).containsExactly(new ContainerPort(null, 80, Protocol.TCP));
        });
    }

    @Test
    void anIntegerTooWideForItsFieldIsRefusedNotWrapped() {
        // 2^32 + 80: a cast to int would make it port 80.
        String yaml = pod("a", "b", "c").replace("containerPort: 8080", "containerPort: 4294967376");

        ParsedManifests parsed = Manifests.parse(yaml, "w.yaml");

        assertThat(parsed.pods()).isEmpty();
        assertThat(parsed.errors()).singleElement().asString()
                .startsWith("w.yaml document 1 (Pod a/b): does not decode as a Pod:")
                .contains("4294967376");
    }

    @Test
    void unknownFieldsAreErrorsWithoutEchoingTheObject() {
        String yaml = pod("a", "b", "c").replace("spec:\n", "spec:\n  hostNetwrk: true\n");

        ParsedManifests parsed = Manifests.parse(yaml, "u.yaml");

        assertThat(parsed.pods()).isEmpty();
        assertThat(parsed.errors()).singleElement().asString()
                .contains("hostNetwrk")
                .doesNotContain("containerPort");
    }

    @Test
    void javaTypeTagsAreRefusedAndNothingIsConstructed() {
        String yaml = """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: p
                  labels:
                    x: !!javax.script.ScriptEngineManager [!!java.net.URLClassLoader [[!!java.net.URL ["http://127.0.0.1/"]]]]
                """;

        ParsedManifests parsed = Manifests.parse(yaml, "t.yaml");

        assertThat(parsed.pods()).isEmpty();
        assertThat(parsed.errors()).singleElement().asString()
                .startsWith("t.yaml document 1: invalid YAML: Global tag is not allowed: "
                        + "tag:yaml.org,2002:javax.script.ScriptEngineManager");
    }

    @Test
    void tagsOutsideTheJsonTypesAreRefused() {
        String local = "apiVersion: v1\nkind: Namespace\nmetadata: {name: !custom a}\n";
        String binary = "apiVersion: v1\nkind: Namespace\nmetadata: {name: !!binary YQ==}\n";
        String set = "apiVersion: v1\nkind: Namespace\nmetadata: !!set {name: a}\n";
        String explicitStr = "apiVersion: v1\nkind: Namespace\nmetadata: {name: !!str 123}\n";

        ParsedManifests parsed = Manifests.parse(local + "---\n" + binary + "---\n" + set + "---\n" + explicitStr, "t.yaml");

        assertThat(parsed.errors()).hasSize(3);
        assertThat(parsed.errors().get(0)).startsWith("t.yaml document 1: unsupported YAML tag \"!custom\" for \"a\" (line 3,");
        assertThat(parsed.errors().get(1)).startsWith("t.yaml document 2: unsupported YAML tag \"tag:yaml.org,2002:binary\"");
        assertThat(parsed.errors().get(2)).startsWith("t.yaml document 3: unsupported YAML tag \"tag:yaml.org,2002:set\"");
        assertThat(parsed.namespaces()).extracting(Namespace::name).containsExactly("123");
    }

    @Test
    void billionLaughsIsRefused() {
        StringBuilder yaml = new StringBuilder("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for (int i = 1; i < 10; i++) {
            yaml.append("a").append(i).append(": &a").append(i).append(" [");
            for (int j = 0; j < 10; j++) {
                yaml.append(j == 0 ? "" : ", ").append("*a").append(i - 1);
            }
            yaml.append("]\n");
        }

        ParsedManifests parsed = Manifests.parse(yaml.toString(), "b.yaml");

        assertThat(parsed.errors()).singleElement().asString().startsWith("b.yaml document 1: ");
    }

    @Test
    void aliasesWithinTheLimitStillCannotExpandWithoutBound() {
        // 25 levels of two aliases each: 50 aliases (SnakeYAML's limit) but 2^25 values when expanded.
        StringBuilder yaml = new StringBuilder("l0: &l0 [x, x]\n");
        for (int i = 1; i < 25; i++) {
            yaml.append("l").append(i).append(": &l").append(i).append(" [*l").append(i - 1).append(", *l")
                    .append(i - 1).append("]\n");
        }

        ParsedManifests parsed = Manifests.parse(yaml.toString(), "b.yaml");

        assertThat(parsed.errors()).singleElement().asString().contains("document too large");
    }

    @Test
    void duplicateKeysAreErrors() {
        String dup = "apiVersion: v1\nkind: Namespace\nkind: Pod\nmetadata: {name: a}\n";

        ParsedManifests parsed = Manifests.parse(dup, "k.yaml");

        assertThat(parsed.namespaces()).isEmpty();
        assertThat(parsed.errors()).singleElement().asString()
                .startsWith("k.yaml document 1: duplicate key \"kind\" (line 3,");
    }

    @Test
    void mergeKeysApplyAsInKubectl() {
        String yaml = """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: p
                  labels:
                    <<: {app: web, tier: front}
                    tier: back
                spec:
                  containers:
                    - &c {name: a, ports: [{containerPort: 80}]}
                    - <<: *c
                      name: b
                """;

        ParsedManifests parsed = Manifests.parse(yaml, "m.yaml");

        assertThat(parsed.errors()).isEmpty();
        assertThat(parsed.pods()).singleElement().satisfies(p -> {
            assertThat(p.labels()).isEqualTo(Map.of("app", "web", "tier", "back"));
            assertThat(p.ports()).hasSize(2);
        });
    }

    @Test
    void documentsThatAreNotObjectsOrLackKindOrNameAreErrors() {
        String stream = "- a\n- b\n---\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\n";

        ParsedManifests parsed = Manifests.parse(stream, "n.yaml");

        assertThat(parsed.errors()).containsExactly(
                "n.yaml document 1: not an object (a manifest is a mapping with apiVersion and kind)",
                "n.yaml document 2 (a): no kind",
                "n.yaml document 3 (Namespace): metadata.name is required");
    }

    @Test
    void listItemsLoadLikeDocuments() {
        String list = """
                apiVersion: v1
                kind: List
                items:
                  - {apiVersion: v1, kind: Namespace, metadata: {name: a}}
                  - {apiVersion: v1, kind: Secret, metadata: {name: s, namespace: a}}
                """;

        ParsedManifests parsed = Manifests.parse(list, "l.yaml");

        assertThat(parsed.namespaces()).extracting(Namespace::name).containsExactly("a");
        assertThat(parsed.errors()).containsExactly("l.yaml document 1 item 1 (Secret a/s): unsupported kind "
                + "(Namespace, Pod, NetworkPolicy and ClusterNetworkPolicy are read, Service accepted)");
    }

    @Test
    void toClusterStateHoldsEveryObjectByKey() {
        ParsedManifests parsed = Manifests.parse(
                NAMESPACE + "---\n" + pod("shop", "api", "api") + "---\n" + POLICY, "c.yaml");

        ClusterState state = parsed.toClusterState();

        assertThat(state.namespaces()).containsOnlyKeys("shop");
        assertThat(state.namespace("shop").labels()).containsEntry("team", "web");
        assertThat(state.pods()).containsOnlyKeys(new PodKey("shop", "api"));
        assertThat(state.policies()).containsOnlyKeys(new PolicyKey("shop", "allow"));
    }
}
