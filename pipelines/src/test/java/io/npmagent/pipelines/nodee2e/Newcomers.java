package io.npmagent.pipelines.nodee2e;

import io.npmagent.harness.cluster.Cluster;
import io.npmagent.harness.cluster.Node;
import io.npmagent.pipelines.scale.Npm640;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A new pod's identity reaching every other node, by packets. A listener on every node, behind a policy that
 * admits pods labelled {@code role=newcomer} and nobody else; then new pods, {@value #WAVE} at a time, on every
 * node in turn, each running {@code firstconnect} ({@code pipelines/src/main/c}, static, bound into an agnhost
 * pod from the host) as its only container against the listeners of every other node, IPv4 and IPv6. A
 * newcomer's identity has reached a node's dataplane when that node's listener first admits it: the time from
 * its {@code status.podIPs} write (when the test's watch saw it; the same clock as the pod's) to that moment, per
 * (pod, other node, family), is the propagation figure, within firstconnect's {@value #INTERVAL_MS} ms. Its
 * first connect (given 900 ms, so its first SYN alone decides) says what a new client meets in the window before:
 * a silent drop is the agent failing closed, as it must. Every {@value #STRANGER_EVERY}th pod is a stranger
 * ({@code role=stranger}), whom the policy never admits: one connection of a stranger, ever, is a fail-open.
 */
final class Newcomers {
    static final String NAMESPACE = "node-e2e-newcomers";
    private static final int WAVE = 10;
    private static final int STRANGER_EVERY = 10;
    private static final int NEWCOMER_SECONDS = 10;
    private static final int STRANGER_SECONDS = 3;
    private static final int INTERVAL_MS = 20;
    private static final int PORT = 8080;
    private static final Duration WAVE_TIMEOUT = Duration.ofSeconds(120);
    private static final Pattern OUTCOME = Pattern.compile("^(\\S+) first=(\\S+) connected_ns=(-?\\d+) attempts=(\\d+)$");

    /** One newcomer's connection to another node's listener: how long after its status its identity was admitted there. */
    record Sample(String pod, int from, int to, String family, double ms, String first) {}

    /** What a run found. */
    record Figures(int pods, List<Sample> samples, List<String> unreached, int strangers, List<String> strangerConnects) {
        List<Double> sortedMs() {
            return samples.stream().map(Sample::ms).sorted().toList();
        }

        long firstDropped() {
            return samples.stream().filter(s -> !s.first().equals("connected")).count();
        }

        String summary() {
            List<Double> ms = sortedMs();
            return String.format(Locale.ROOT, "%d new pods, %d (pod, other node, family) pairs: status -> admitted on the other node p50 %.0f ms,"
                            + " p99 %.0f ms, max %.0f ms; first connection dropped (fail closed) %d of %d; strangers %d, connections %d",
                    pods, ms.size(), Npm640.percentile(ms, 0.5), Npm640.percentile(ms, 0.99), ms.isEmpty() ? 0 : ms.get(ms.size() - 1),
                    firstDropped(), samples.size(), strangers, strangerConnects.size());
        }
    }

    private final Cluster cluster;
    private final Path probe;
    private final String image;
    private final Path work;

    /** PROBE: the static firstconnect on the host; IMAGE: the agnhost image the pods run it in; WORK: for the generated manifests. */
    Newcomers(Cluster cluster, Path probe, String image, Path work) {
        this.cluster = cluster;
        this.probe = probe;
        this.image = image;
        this.work = work;
    }

    Figures run(int pods) throws Exception {
        Map<Integer, List<String>> listeners = deployListeners();
        Map<String, Instant> statusSeen = new ConcurrentHashMap<>();
        Process watch = watchStatus(statusSeen);
        try {
            List<Sample> samples = new ArrayList<>();
            List<String> unreached = new ArrayList<>();
            List<String> strangerConnects = new ArrayList<>();
            int strangers = 0;
            for (int first = 0; first < pods; first += WAVE) {
                List<String> names = new ArrayList<>();
                StringBuilder yaml = new StringBuilder();
                for (int i = first; i < Math.min(pods, first + WAVE); i++) {
                    boolean stranger = i % STRANGER_EVERY == STRANGER_EVERY - 1;
                    int node = i % cluster.nodes().size();
                    String name = (stranger ? "stranger-" : "newcomer-") + i;
                    names.add(name);
                    yaml.append(pod(name, stranger, cluster.nodes().get(node), first / WAVE, targetsFrom(node, listeners)));
                }
                Path file = work.resolve("node-e2e-newcomers-wave.yaml");
                Files.writeString(file, yaml.toString());
                cluster.kubectl("apply", "-f", file.toString());
                awaitFinished(first / WAVE, names.size());
                for (String name : names) {
                    int from = Integer.parseInt(name.substring(name.indexOf('-') + 1)) % cluster.nodes().size();
                    Instant seen = statusSeen.get(name);
                    for (String line : cluster.kubectl("-n", NAMESPACE, "logs", name).lines().toList()) {
                        Matcher m = OUTCOME.matcher(line.strip());
                        if (!m.matches()) {
                            continue;
                        }
                        String target = m.group(1);
                        long connectedNs = Long.parseLong(m.group(3));
                        int to = nodeOf(target, listeners);
                        if (name.startsWith("stranger-")) {
                            if (connectedNs >= 0) {
                                strangerConnects.add(name + " (node " + from + ") reached " + target + " on node " + to);
                            }
                        } else if (connectedNs < 0 || seen == null) {
                            unreached.add(name + " (node " + from + ") -> " + target + " on node " + to
                                    + (seen == null ? ": its status was never seen" : ": never admitted in " + NEWCOMER_SECONDS + " s"));
                        } else {
                            double ms = (connectedNs - (seen.getEpochSecond() * 1_000_000_000L + seen.getNano())) / 1e6;
                            samples.add(new Sample(name, from, to, target.startsWith("[") ? "IPv6" : "IPv4", ms, m.group(2)));
                        }
                    }
                    strangers += name.startsWith("stranger-") ? 1 : 0;
                }
                cluster.kubectl("-n", NAMESPACE, "delete", "pods", "-l", "wave=" + first / WAVE, "--wait=false");
            }
            return new Figures(pods, samples, unreached, strangers, strangerConnects);
        } finally {
            watch.destroy();
            cluster.kubectlRun("delete", "namespace", NAMESPACE, "--wait=true", "--timeout=120s");
        }
    }

    /** The namespace, the policy, a listener per node, Ready; each node's listener addresses as firstconnect takes them. */
    private Map<Integer, List<String>> deployListeners() throws IOException {
        Path manifests = cluster.checkout().resolve("pipelines/cluster-manifests");
        StringBuilder yaml = new StringBuilder(Files.readString(manifests.resolve("node-e2e-newcomers.yaml")));
        String listener = Files.readString(manifests.resolve("node-e2e-listener.yaml"));
        for (Node n : cluster.nodes()) {
            yaml.append("\n---\n").append(listener.replace("@NODE@", n.name()).replace("@INDEX@", Integer.toString(n.index()))
                    .replace("@AGNHOST_IMAGE@", image));
        }
        Path file = work.resolve("node-e2e-newcomers.yaml");
        Files.writeString(file, yaml.toString());
        cluster.kubectl("apply", "-f", file.toString());
        cluster.kubectl("-n", NAMESPACE, "wait", "--for=condition=Ready", "pod", "-l", "app=listener", "--timeout=120s");
        Map<Integer, List<String>> out = new ConcurrentHashMap<>();
        for (Node n : cluster.nodes()) {
            List<String> addresses = new ArrayList<>();
            for (String ip : cluster.kubectl("-n", NAMESPACE, "get", "pod", "listener-" + n.index(), "-o", "jsonpath={.status.podIPs[*].ip}")
                    .strip().split("\\s+")) {
                addresses.add((ip.contains(":") ? "[" + ip + "]" : ip) + ":" + PORT);
            }
            out.put(n.index(), addresses);
        }
        return out;
    }

    /** Every other node's listener addresses, for a pod on NODE. */
    private static List<String> targetsFrom(int node, Map<Integer, List<String>> listeners) {
        List<String> out = new ArrayList<>();
        listeners.forEach((n, addresses) -> {
            if (n != node) {
                out.addAll(addresses);
            }
        });
        return out;
    }

    private static int nodeOf(String target, Map<Integer, List<String>> listeners) {
        return listeners.entrySet().stream().filter(e -> e.getValue().contains(target)).map(Map.Entry::getKey).findFirst().orElse(-1);
    }

    /** A pod running firstconnect once (restartPolicy Never) against TARGETS; its labels say what the policy makes of it. */
    private String pod(String name, boolean stranger, Node node, int wave, List<String> targets) {
        StringBuilder args = new StringBuilder("[\"" + (stranger ? STRANGER_SECONDS : NEWCOMER_SECONDS) + "\", \"" + INTERVAL_MS + "\"");
        targets.forEach(t -> args.append(", \"").append(t).append('"'));
        args.append(']');
        return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: " + NAMESPACE + "\n  labels: {role: "
                + (stranger ? "stranger" : "newcomer") + ", wave: \"" + wave + "\"}\nspec:\n  nodeName: \"" + node.name() + "\"\n"
                + "  restartPolicy: Never\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: firstconnect\n"
                + "      image: \"" + image + "\"\n      imagePullPolicy: Never\n      command: [\"/firstconnect\"]\n      args: " + args + "\n"
                + "      volumeMounts: [{name: probe, mountPath: /firstconnect, readOnly: true}]\n"
                + "  volumes: [{name: probe, hostPath: {path: \"" + probe + "\", type: File}}]\n";
    }

    /** Until every pod of the wave has ended (Succeeded; Failed is a broken probe, reported by its missing lines). */
    private void awaitFinished(int wave, int count) {
        io.npmagent.harness.process.Await.until(WAVE_TIMEOUT, Duration.ofMillis(500), "wave " + wave + "'s pods ended", () -> {
            String phases = cluster.kubectlRun("-n", NAMESPACE, "get", "pods", "-l", "wave=" + wave, "-o",
                    "jsonpath={range .items[*]}{.status.phase}{\"\\n\"}{end}").stdout();
            return phases.lines().filter(p -> p.equals("Succeeded") || p.equals("Failed")).count() == count;
        });
    }

    /**
     * A watch on the namespace's pods (kubectl, as admin): the moment each pod's address first appears in its status,
     * which is when the agents' informers can learn of it.
     */
    private Process watchStatus(Map<String, Instant> seen) throws IOException {
        Process p = new ProcessBuilder(cluster.bin("kubectl").toString(), "--kubeconfig", cluster.config().adminKubeconfig().toString(), "-n",
                NAMESPACE, "get", "pods", "--watch", "-o", "jsonpath={.metadata.name} {.status.podIP}{\"\\n\"}")
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    Instant at = Instant.now();
                    String[] f = line.strip().split(" ");
                    if (f.length == 2 && !f[1].isEmpty()) {
                        seen.putIfAbsent(f[0], at);
                    }
                }
            } catch (IOException e) {
                // the watch ended with the run
            }
        }, "newcomers-watch");
        reader.setDaemon(true);
        reader.start();
        return p;
    }
}
