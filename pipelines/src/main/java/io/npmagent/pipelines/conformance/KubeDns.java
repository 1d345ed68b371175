package io.npmagent.pipelines.conformance;

import io.npmagent.harness.process.Daemon;
import io.npmagent.harness.controlplane.KubeBinaries;
import io.npmagent.harness.sandbox.Sandbox;
import io.npmagent.dataplane.exec.ProcessRunner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The conformance sandbox's cluster DNS, laid out as kubeadm lays it out: a pod {@code kube-system/coredns}
 * labelled {@code k8s-app: kube-dns} behind the Service {@code kube-system/kube-dns} (ClusterIP
 * {@value #CLUSTER_IP}, ports {@code dns} UDP 53 and {@code dns-tcp} TCP 53), answered by the real CoreDNS
 * (built by {@code pipelines/kube-binaries}) running in the pod's network namespace. It serves one fixed
 * name, {@value #NAME} A {@value #ADDRESS}, NXDOMAIN for the rest of its zone, refuses other zones and
 * forwards nothing.
 *
 * <p>The pod declares no container port: the sandbox starts its own echo server on every declared port,
 * which would take port 53 from CoreDNS. The Service's numeric {@code targetPort} needs none. The pod is
 * no model pod, so the model cases never assert a probe from or to it, nor through its Service.
 */
final class KubeDns implements AutoCloseable {
    static final String NAMESPACE = "kube-system";
    static final String POD = "coredns";
    static final String POD_KEY = NAMESPACE + "/" + POD;
    static final String SERVICE = "kube-dns";
    static final String CLUSTER_IP = "10.96.0.10";
    /** Outside the model's 10.244.1-3.0/24 and the sandbox's own range for pods without an address (10.250.0.0/16). */
    static final String POD_IP = "10.244.4.53";
    static final String ZONE = "npm-conformance.test.";
    static final String NAME = "probe." + ZONE;
    /** TEST-NET-1 (RFC 5737): an answer only, never contacted. */
    static final String ADDRESS = "192.0.2.53";
    /** The file of the sandbox's manifest directory that holds the namespace, the pod and the Service. */
    static final String FILE = "kube-dns.yaml";

    private final Daemon process;
    private final Path dir;
    private final Thread hook;

    private KubeDns(Daemon process, Path dir) {
        this.process = process;
        this.dir = dir;
        this.hook = new Thread(() -> process.process().destroyForcibly(), "kube-dns-stop");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** The Namespace (as the API server labels it), the Pod (address declared, no ports) and the Service. */
    static String manifests() {
        return """
                apiVersion: v1
                kind: Namespace
                metadata:
                  name: %1$s
                  labels:
                    kubernetes.io/metadata.name: %1$s
                ---
                apiVersion: v1
                kind: Pod
                metadata:
                  namespace: %1$s
                  name: %2$s
                  labels:
                    k8s-app: kube-dns
                spec:
                  containers:
                  - name: coredns
                    image: registry.k8s.io/coredns/coredns
                status:
                  phase: Running
                  podIP: %4$s
                  podIPs:
                  - ip: %4$s
                ---
                apiVersion: v1
                kind: Service
                metadata:
                  namespace: %1$s
                  name: %3$s
                  labels:
                    k8s-app: kube-dns
                spec:
                  selector:
                    k8s-app: kube-dns
                  clusterIP: %5$s
                  ports:
                  - name: dns
                    port: 53
                    targetPort: 53
                    protocol: UDP
                  - name: dns-tcp
                    port: 53
                    targetPort: 53
                    protocol: TCP
                """.formatted(NAMESPACE, POD, SERVICE, POD_IP, CLUSTER_IP);
    }

    /** CoreDNS's configuration: the one zone on {@code bindIp} and {@code port} (UDP and TCP), each query logged. */
    static String corefile(String bindIp, int port) {
        return """
                # The conformance pipeline's kube-dns (pipelines/conformance): one fixed name; nothing is forwarded.
                %1$s:%5$d {
                    bind %2$s
                    template IN A {
                        match ^probe[.]npm-conformance[.]test[.]$
                        answer "%3$s 30 IN A %4$s"
                        fallthrough
                    }
                    template ANY ANY {
                        rcode NXDOMAIN
                    }
                    log
                    errors
                }
                """.formatted(ZONE, bindIp, NAME, ADDRESS, port);
    }

    /**
     * Starts CoreDNS in the DNS pod's network namespace of sandbox {@code sandbox} and returns once it
     * answers {@value #NAME} on the pod's address (asked from inside the pod, so no policy is on the path).
     */
    static KubeDns start(String sandbox) throws IOException {
        return start(netns(sandbox, POD_KEY), POD_IP, 53);
    }

    /** CoreDNS on {@link #corefile} in network namespace {@code netns} (null: this process's), once it answers there. */
    static KubeDns start(String netns, String bindIp, int port) throws IOException {
        Path binary = KubeBinaries.dir().resolve("coredns");
        if (!Files.isExecutable(binary)) {
            throw new IOException(binary + " is missing: pipelines/kube-binaries coredns builds it");
        }
        if (!ProcessRunner.host().available("dig")) {
            throw new IOException("dig is not installed (Debian: apt-get install bind9-dnsutils; pipelines/test installs it)");
        }
        Path dir = Files.createTempDirectory("npm-conformance-dns-");
        Path corefile = dir.resolve("Corefile");
        Path log = dir.resolve("coredns.log");
        Files.writeString(corefile, corefile(bindIp, port), StandardCharsets.UTF_8);
        Daemon.Spec spec = Daemon.of("CoreDNS", log, List.of(binary.toString(), "-conf", corefile.toString()));
        Daemon p = (netns == null ? spec : spec.inNetns(netns)).start();
        KubeDns dns = new KubeDns(p, dir);
        Instant deadline = Instant.now().plusSeconds(20);
        Dig.Lookup last = null;
        while (Instant.now().isBefore(deadline)) {
            if (!p.alive()) {
                break;
            }
            last = Dig.lookup(netns, bindIp, port, NAME, false);
            if (last.resolves(ADDRESS, "UDP")) {
                return dns;
            }
            sleep(200);
        }
        String state = p.alive() ? "did not answer in 20 s" : "exited " + p.process().exitValue();
        String said = Files.exists(log) ? tail(Files.readString(log, StandardCharsets.UTF_8), 10) : "";
        dns.close();
        throw new IOException("CoreDNS on " + bindIp + ":" + port + " " + state
                + (last == null ? "" : " (last lookup: " + last.describe() + ")") + "; it said: " + said);
    }

    /** The network namespace of {@code pod} in sandbox {@code sandbox}. */
    static String netns(String sandbox, String pod) throws IOException {
        return Sandbox.named(sandbox).pods().stream().filter(r -> r.pod().equals(pod)).map(Sandbox.PodRecord::netns).findFirst()
                .orElseThrow(() -> new IOException("sandbox " + sandbox + " has no pod " + pod));
    }

    /** Stops CoreDNS (before the sandbox goes: a namespace with a process in it outlives {@code ip netns del}). */
    @Override
    public void close() {
        process.stop(Duration.ofSeconds(5));
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // the JVM is stopping; the hook kills the process anyway
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        } catch (IOException e) {
            // a temporary directory left behind
        }
    }

    private static String tail(String text, int lines) {
        List<String> all = text.strip().lines().toList();
        return String.join(" | ", all.subList(Math.max(0, all.size() - lines), all.size()));
    }

    private static void sleep(long millis) throws IOException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }
}
