package io.npmagent.pipelines.conformance;

import io.npmagent.harness.cli.HarnessMain;
import io.npmagent.harness.sandbox.Sandbox;
import com.google.gson.Gson;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.npmagent.agent.cli.CliRun;
import io.npmagent.dataplane.eval.ReferenceEvaluator;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.ContainerPort;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * The conformance cases on one backend, driven only through the sandbox's contract, as any other tool
 * would drive it: the model and each step written as manifests into a directory, {@code sandbox up}
 * (a node of a real cluster: the manifests go through the API server, the agent reads them back with its
 * informers), and after each step {@code sandbox probe --output json}, compared with the case's expectations on
 * every ordered pair of distinct pods and every listed port and protocol, directly and through the
 * destination's Service; and each pod through its own Service (hairpin), judged by the step's policies as any other pair
 * (cyclonus expects it; upstream's e2e suite does not assert it): what the case lists for the pair, else the
 * reference evaluator's verdict for the pod to itself (a listed verdict the evaluator disagrees with is a
 * failure of the case). SCTP probes are counted as skipped: this kernel has no SCTP sockets to serve or probe them. Beside the model, the sandbox has a
 * kube-dns ({@link KubeDns}: CoreDNS in {@code kube-system} behind its Service) for the DNS case
 * ({@link #runDns}); the model cases assert nothing from, to or through it.
 */
final class SandboxCaseRun implements AutoCloseable {
    private static final Gson GSON = new Gson();

    private final ConformanceModel model;
    private final String backend;
    private final String sandbox;
    private final Path dir;
    private final String upError;
    /** The running CoreDNS, or null with {@link #dnsError} saying why it is not running. */
    private final KubeDns dns;
    private final String dnsError;

    /**
     * One sandbox for every case of a backend, as policies come and go on a long-running node: it comes up
     * once with the model, and each case starts by putting the model back (labels as the model has them,
     * no policies) in the same generation as its first step.
     */
    private SandboxCaseRun(ConformanceModel model, String backend, String kubeProxyMode, int nodes) throws IOException {
        this.model = model;
        this.backend = backend;
        this.sandbox = "conf-" + backend.replace("iptables-", "ipt-");
        this.dir = Files.createTempDirectory("npm-conformance-");
        writeModel();
        write(dir.resolve(KubeDns.FILE), KubeDns.manifests());
        // Generous waits: two backends bring up two clusters at once on a small machine.
        CliRun up = HarnessMain.run("sandbox", "up", "--name", sandbox, "--manifests", dir.toString(), "--backend", backend,
                "--kube-proxy-mode", kubeProxyMode, "--nodes", Integer.toString(nodes), "--wait-seconds", "180");
        this.upError = up.exitCode() == 0 ? null : "sandbox up failed: " + up.err().strip();
        if (upError == null) {
            System.out.println("# " + backend + ": " + placement(Sandbox.named(sandbox).pods()));
        }
        KubeDns started = null;
        String why = upError;
        if (upError == null) {
            try {
                started = KubeDns.start(sandbox);
            } catch (IOException | RuntimeException e) { // the DNS case fails with it; the model cases run all the same
                why = "kube-dns: " + e.getMessage();
            }
        }
        this.dns = started;
        this.dnsError = started == null ? why : null;
    }

    /** Where the pods landed, node by node: {@code node: ns/pod ns/pod; node: ...}. */
    static String placement(List<Sandbox.PodRecord> pods) {
        Map<String, List<String>> byNode = new TreeMap<>();
        pods.forEach(p -> byNode.computeIfAbsent(p.node(), n -> new ArrayList<>()).add(p.pod()));
        return String.join("; ", byNode.entrySet().stream().map(e -> e.getKey() + ": " + String.join(" ", e.getValue())).toList());
    }

    static SandboxCaseRun up(ConformanceModel model, String backend, String kubeProxyMode, int nodes) throws IOException {
        return new SandboxCaseRun(model, backend, kubeProxyMode, nodes);
    }

    private void writeModel() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : files.filter(f -> f.getFileName().toString().startsWith("np-")).toList()) {
                Files.delete(p);
            }
        }
        writeNamespaces(dir, model.namespaces());
        model.pods().forEach(p -> writePod(dir, p));
        writeServices(dir, model.pods());
    }

    ConformanceMain.CaseResult run(ConformanceCase c) throws IOException {
        long start = System.nanoTime();
        if (upError != null) {
            return new ConformanceMain.CaseResult(c.name(), backend, List.of(upError), 0, 0, seconds(start));
        }
        List<String> wrong = new ArrayList<>();
        long checked = 0;
        long skipped = 0;
        Map<String, Namespace> namespaces = new LinkedHashMap<>();
        model.namespaces().forEach(n -> namespaces.put(n.name(), n));
        Map<PodKey, Pod> pods = new LinkedHashMap<>();
        model.pods().forEach(p -> pods.put(p.key(), p));
        Map<ObjectRef, ClusterEvent> policies = new LinkedHashMap<>();
        writeModel();
        {
            for (ConformanceCase.Step step : c.steps()) {
                for (int i = 0; i < step.apply().size(); i++) {
                    ObjectRef ref = ConformanceCase.ref(step.apply().get(i));
                    write(policyFile(dir, ref), step.applyManifests().get(i));
                    policies.put(ref, step.apply().get(i));
                }
                for (ClusterEvent delete : step.delete()) {
                    ObjectRef ref = ConformanceCase.ref(delete);
                    Files.deleteIfExists(policyFile(dir, ref));
                    policies.remove(ref);
                }
                for (ConformanceCase.ModelChange change : step.modelChanges()) {
                    if (change.op().equals("add_pod_labels")) {
                        Pod pod = pods.get(PodKey.parse(change.target()));
                        Map<String, String> labels = new HashMap<>(pod.labels());
                        labels.putAll(change.labels());
                        Pod changed = pod.toBuilder().labels(labels).build();
                        pods.put(changed.key(), changed);
                        writePod(dir, changed);
                    } else {
                        Namespace ns = namespaces.get(change.target());
                        Map<String, String> labels = new HashMap<>(ns.labels());
                        labels.putAll(change.labels());
                        namespaces.put(ns.name(), new Namespace(ns.name(), labels));
                        writeNamespaces(dir, namespaces.values());
                    }
                }
                Map<String, Boolean> hairpin = hairpinExpected(step, namespaces.values(), pods.values(), policies.values(), wrong);
                // A mismatch is probed once more, after two seconds, and said so on stderr; a second mismatch is a
                // failure. Upstream's ValidateOrFail (test/e2e/network/netpol) takes the same second try. Why a first
                // try can disagree: a UDP probe whose random source port repeats one of the last 30 s is that old
                // flow, established, to conntrack and to npm_ct alike. (TCP cannot: a SYN always meets the policy.)
                List<String> stepWrong = new ArrayList<>();
                long stepChecked = 0;
                long stepSkipped = 0;
                for (int attempt = 1; attempt <= 2; attempt++) {
                    stepWrong = new ArrayList<>();
                    stepChecked = 0;
                    stepSkipped = 0;
                    Probed probed = probe();
                    if (probed.error() != null) {
                        stepWrong.add("step " + step.number() + ": " + probed.error());
                        break;
                    }
                    Map<String, JsonObject> results = probed.direct();
                    Map<String, JsonObject> viaService = probed.viaService();
                    for (ConformanceCase.Probe p : step.probes()) {
                        for (Pod from : pods.values()) {
                            for (Pod to : pods.values()) {
                                if (p.protocol() == Protocol.SCTP) {
                                    stepSkipped++;
                                    continue;
                                }
                                if (from.key().equals(to.key())) {
                                    // A pod through its own Service (hairpin, which kube-proxy DNATs back to it and
                                    // masquerades): judged by the step's policies as any other pair (hairpinExpected).
                                    String k = key(from.key().toString(), to.key().toString(), p.port(), p.protocol().name());
                                    stepChecked++;
                                    check(stepWrong, "step " + step.number() + " " + from.key() + " -> itself " + p.protocol() + "/" + p.port()
                                            + " through its Service " + serviceName(to), viaService.get(k), hairpin.get(k));
                                    continue;
                                }
                                boolean expected = step.expected(from.key(), to.key(), p);
                                String k = key(from.key().toString(), to.key().toString(), p.port(), p.protocol().name());
                                String where = "step " + step.number() + " " + from.key() + " -> " + to.key() + " " + p.protocol() + "/" + p.port();
                                stepChecked += 2;
                                check(stepWrong, where, results.get(k), expected);
                                check(stepWrong, where + " through Service " + serviceName(to), viaService.get(k), expected);
                            }
                        }
                    }
                    if (stepWrong.isEmpty() || attempt == 2 || !againAfter(c.name(), step.number(), stepWrong)) {
                        break;
                    }
                }
                wrong.addAll(stepWrong);
                checked += stepChecked;
                skipped += stepSkipped;
            }
        }
        return new ConformanceMain.CaseResult(c.name(), backend, wrong, checked, skipped, seconds(start));
    }

    /**
     * What each pod through its own Service (hairpin) must get after a step, by probe key: the policies
     * judge it as any other pair (the pod's egress with itself as the destination, its ingress with itself as
     * the source), as cyclonus expects; upstream's e2e suite does not assert these pairs. The case's own
     * exception for the pair where it lists one, else the reference evaluator's verdict for the pod to
     * itself on the step's cluster. A listed verdict the evaluator disagrees with goes to {@code wrong}: the
     * case's data is wrong, whatever the packets do.
     */
    private static Map<String, Boolean> hairpinExpected(ConformanceCase.Step step, Iterable<Namespace> namespaces,
                                                        Iterable<Pod> pods, Iterable<ClusterEvent> policies, List<String> wrong) {
        List<ClusterEvent> events = new ArrayList<>();
        namespaces.forEach(n -> events.add(new ClusterEvent.NamespaceUpserted(n)));
        pods.forEach(p -> events.add(new ClusterEvent.PodUpserted(p)));
        policies.forEach(events::add);
        ReferenceEvaluator evaluator = new ReferenceEvaluator(ClusterState.EMPTY.applyAll(events));
        Map<String, Boolean> out = new HashMap<>();
        for (ConformanceCase.Probe p : step.probes()) {
            for (Pod pod : pods) {
                boolean byEvaluator = evaluator.allowed(pod.key(), pod.key(), false, p.port(), p.protocol()).allowed();
                Boolean listed = step.exceptions().get(new ConformanceCase.Expectation(pod.key(), pod.key(), p.port(), p.protocol()));
                if (listed != null && listed != byEvaluator) {
                    wrong.add("step " + step.number() + " " + pod.key() + " -> itself " + p.protocol() + "/" + p.port()
                            + ": the case expects " + (listed ? "allow" : "deny") + ", the reference evaluator says "
                            + (byEvaluator ? "allow" : "deny"));
                }
                out.put(key(pod.key().toString(), pod.key().toString(), p.port(), p.protocol().name()), listed != null ? listed : byEvaluator);
            }
        }
        return out;
    }

    /** One {@code sandbox probe} (which first waits until the agent and kube-proxy have what the directory says now). */
    private record Probed(Map<String, JsonObject> direct, Map<String, JsonObject> viaService, String error) {}

    private Probed probe() {
        CliRun probe = HarnessMain.run("sandbox", "probe", "--name", sandbox, "--output", "json", "--wait-seconds", "90");
        if (probe.exitCode() != 0) {
            return new Probed(Map.of(), Map.of(), "sandbox probe failed: " + probe.err().strip());
        }
        // Pod to pod, and through each pod's own Service (one backend, the same port numbers): as upstream's
        // suite probes, a Service probe must have its pod probe's verdict (judged after DNAT). Results from, to or
        // through pods that are not the model's (kube-dns) are keyed too, and never looked up by the model cases.
        Map<String, JsonObject> results = new HashMap<>();
        Map<String, JsonObject> viaService = new HashMap<>();
        for (JsonElement e : GSON.fromJson(probe.out(), JsonObject.class).getAsJsonArray("results")) {
            JsonObject r = e.getAsJsonObject();
            if (!r.get("family").getAsString().equals("IPv4") || r.get("to").isJsonNull()) {
                continue;
            }
            (r.has("service") ? viaService : results).put(key(r.get("from").getAsString(), r.get("to").getAsString(),
                    r.get("port").getAsInt(), r.get("protocol").getAsString()), r);
        }
        return new Probed(results, viaService, null);
    }

    /**
     * The DNS case ({@link DnsCase}) on this sandbox, from the model with no policy: each step's policy files
     * written or deleted, then {@code sandbox probe} (which waits until the agent has applied them, as for any
     * step, and whose pod probes the step checks), then each lookup with dig from its pod's namespace through
     * the kube-dns ClusterIP. A step that disagrees is tried once more after 2 s, as the model cases' steps are.
     * It leaves no policy behind.
     */
    ConformanceMain.CaseResult runDns() throws IOException {
        long start = System.nanoTime();
        if (dnsError != null) {
            return new ConformanceMain.CaseResult(DnsCase.NAME, backend, List.of(dnsError), 0, 0, seconds(start));
        }
        writeModel();
        List<String> wrong = new ArrayList<>();
        long checked = 0;
        for (DnsCase.Step step : DnsCase.steps()) {
            for (PolicyKey key : DnsCase.POLICIES) {
                if (step.policies().contains(key)) {
                    write(policyFile(dir, key), DnsCase.manifest(key));
                } else {
                    Files.deleteIfExists(policyFile(dir, key));
                }
            }
            List<String> stepWrong = new ArrayList<>();
            for (int attempt = 1; attempt <= 2; attempt++) {
                stepWrong = new ArrayList<>();
                Probed probed = probe();
                if (probed.error() != null) {
                    stepWrong.add("step " + step.number() + ": " + probed.error());
                    break;
                }
                for (DnsCase.Reach r : step.probes()) {
                    String k = key(r.from(), r.to(), r.port(), r.protocol().name());
                    String where = "step " + step.number() + " " + r.from() + " -> " + r.to() + " " + r.protocol() + "/" + r.port();
                    String[] to = r.to().split("/");
                    check(stepWrong, where, probed.direct().get(k), r.allowed());
                    check(stepWrong, where + " through Service " + to[0] + "/s-" + to[1], probed.viaService().get(k), r.allowed());
                }
                for (DnsCase.Lookup l : step.lookups()) {
                    String transport = Dig.transport(l.tcp());
                    Dig.Lookup got = Dig.lookup(KubeDns.netns(sandbox, l.from()), KubeDns.CLUSTER_IP, 53, KubeDns.NAME, l.tcp());
                    // Allowed: the record itself. Denied: no answer at all (an answer of any status got through).
                    boolean ok = l.resolves() ? got.resolves(KubeDns.ADDRESS, transport) : got.status() == null;
                    if (!ok) {
                        stepWrong.add("step " + step.number() + " " + l.from() + " looks up " + KubeDns.NAME + " at " + KubeDns.CLUSTER_IP
                                + " over " + transport + ": expected " + (l.resolves() ? "A " + KubeDns.ADDRESS : "no answer")
                                + ", got " + got.describe());
                    }
                }
                if (stepWrong.isEmpty() || attempt == 2 || !againAfter(DnsCase.NAME, step.number(), stepWrong)) {
                    break;
                }
            }
            wrong.addAll(stepWrong);
            checked += 2L * step.probes().size() + step.lookups().size();
        }
        return new ConformanceMain.CaseResult(DnsCase.NAME, backend, wrong, checked, 0, seconds(start));
    }

    /** Says on stderr why a step is tried once more, then waits 2 s; false when interrupted. */
    private boolean againAfter(String caseName, int step, List<String> wrong) {
        System.err.printf("# %s %s step %d: re-probing after %s%n", backend, caseName, step, wrong);
        try {
            Thread.sleep(2000);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public void close() throws IOException {
        if (dns != null) {
            dns.close();
        }
        HarnessMain.run("sandbox", "down", "--name", sandbox);
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static String key(String from, String to, int port, String protocol) {
        return from + " " + to + " " + protocol + "/" + port;
    }

    private static Path policyFile(Path dir, PolicyKey key) {
        return policyFile(dir, ObjectRef.of(key));
    }

    /** {@code np-NS-NAME.yaml}, {@code np--NAME.yaml} for a ClusterNetworkPolicy (no namespace name is empty). */
    private static Path policyFile(Path dir, ObjectRef ref) {
        return dir.resolve("np-" + (ref.namespace() == null ? "" : ref.namespace()) + "-" + ref.name() + ".yaml");
    }

    private static void writeNamespaces(Path dir, Iterable<Namespace> namespaces) {
        StringBuilder sb = new StringBuilder();
        for (Namespace ns : namespaces) {
            sb.append("---\n").append(yaml(Map.of("apiVersion", "v1", "kind", "Namespace",
                    "metadata", Map.of("name", ns.name(), "labels", ns.labels()))));
        }
        write(dir.resolve("namespaces.yaml"), sb.toString());
    }

    /** Adds to {@code wrong} what is wrong with probe result {@code r} (null: not probed) at {@code where}. */
    private static void check(List<String> wrong, String where, JsonObject r, boolean expected) {
        if (r == null) {
            wrong.add(where + ": not probed");
        } else if (r.has("error")) {
            wrong.add(where + ": " + r.get("error").getAsString());
        } else if (r.get("allowed").getAsBoolean() != expected) {
            wrong.add(where + ": expected " + (expected ? "allow" : "deny") + ", packets were " + (expected ? "denied" : "allowed"));
        }
    }

    /** Upstream's names: Service s-POD in the pod's namespace, selecting it by its pod label. */
    private static String serviceName(Pod pod) {
        return pod.namespace() + "/s-" + pod.name();
    }

    /** A Service per pod, one port per served TCP and UDP port at the same number (SCTP: no sockets here). */
    private static void writeServices(Path dir, List<Pod> pods) {
        StringBuilder sb = new StringBuilder();
        for (Pod pod : pods) {
            List<Map<String, Object>> ports = new ArrayList<>();
            for (ContainerPort p : pod.ports()) {
                if (p.protocol() != Protocol.SCTP) {
                    ports.add(Map.of("name", p.name(), "port", p.port(), "targetPort", p.port(), "protocol", p.protocol().name()));
                }
            }
            sb.append("---\n").append(yaml(Map.of("apiVersion", "v1", "kind", "Service",
                    "metadata", Map.of("namespace", pod.namespace(), "name", "s-" + pod.name()),
                    "spec", Map.of("selector", Map.of("pod", pod.labels().get("pod")), "ports", ports))));
        }
        write(dir.resolve("services.yaml"), sb.toString());
    }

    private static void writePod(Path dir, Pod pod) {
        List<Map<String, Object>> ports = new ArrayList<>();
        for (ContainerPort p : pod.ports()) {
            ports.add(Map.of("name", p.name(), "containerPort", p.port(), "protocol", p.protocol().name()));
        }
        List<Map<String, Object>> ips = new ArrayList<>();
        for (IpAddress ip : pod.ips()) {
            ips.add(Map.of("ip", ip.toString()));
        }
        Map<String, Object> manifest = new LinkedHashMap<>();
        manifest.put("apiVersion", "v1");
        manifest.put("kind", "Pod");
        manifest.put("metadata", Map.of("namespace", pod.namespace(), "name", pod.name(), "labels", pod.labels()));
        manifest.put("spec", Map.of("containers", List.of(Map.of("name", "serve", "image", "agnhost", "ports", ports))));
        manifest.put("status", Map.of("phase", "Running", "podIP", pod.ips().get(0).toString(), "podIPs", ips));
        write(dir.resolve("pod-" + pod.namespace() + "-" + pod.name().toLowerCase(Locale.ROOT) + ".yaml"), yaml(manifest));
    }

    private static String yaml(Object o) {
        DumperOptions options = new DumperOptions();
        options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        return new Yaml(options).dump(o);
    }

    /** Writes the file whole or not at all (a temporary beside it, renamed), so the sandbox never reads half of it. */
    private static void write(Path file, String text) {
        try {
            Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
            Files.writeString(tmp, text, StandardCharsets.UTF_8);
            Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static double seconds(long start) {
        return (System.nanoTime() - start) / 1e9;
    }
}
