package io.npmagent.pipelines.datapath;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The manifest directory of one benchmark point: namespace {@code bench} with a server, a client and an
 * intruder pod (fixed addresses), and N NetworkPolicies that all select the server for ingress.
 *
 * <p>Exactly one policy admits the client, on the benchmark ports, and its name sorts last, so a backend
 * that walks a pod's policies in name order (the iptables pod chain does) evaluates every other policy
 * before it on each new connection: the worst case. The other N-1 admit peers that are not the client
 * (other pod labels, other namespaces, address blocks, other ports or protocols), in a rotation of
 * shapes seen in real clusters, each policy with values of its own so that none is a duplicate the
 * backend could share. No policy admits the intruder, so with any policy present it must be blocked.
 *
 * <p>The server also has a Service ({@link #SERVICE_IP}, the real kube-proxy's DNAT), and with any policy
 * present one more policy isolates the client's egress and admits the server: traffic through the
 * ClusterIP is then judged on the way out after DNAT (the eBPF backend's forward hook) as well as on the
 * way in. It is not counted in N, which counts the policies selecting the server.
 *
 * <p>The benchmark ports are not declared as container ports: the sandbox would start its own server
 * on a declared port, and {@code tcprate} and {@code iperf3} are to own them.
 */
final class BenchManifests {
    static final String NAMESPACE = "bench";
    static final String SERVER = NAMESPACE + "/server";
    static final String CLIENT = NAMESPACE + "/client";
    static final String INTRUDER = NAMESPACE + "/intruder";
    static final String SERVER_IP = "10.77.0.10";
    static final String INTRUDER_IP = "10.77.0.30";
    /** The server's Service (its ClusterIP, in the sandbox's Service range 10.96.0.0/16). */
    static final String SERVICE_IP = "10.96.77.10";
    /** The policy that isolates the client's egress (with N > 0). */
    static final String CLIENT_EGRESS = "client-egress";
    /** tcprate's port (new connections per second). */
    static final int RATE_PORT = 5001;
    /** iperf3's port (bulk throughput). */
    static final int IPERF_PORT = 5201;
    /** How many shapes of non-matching policy rotate; see {@link #otherPolicy}. */
    static final int SHAPES = 7;

    private BenchManifests() {}

    /**
     * Writes the namespace, the three pods, the server's Service and {@code policies} policies selecting
     * the server (plus the client's egress policy when {@code policies > 0}) into {@code dir}.
     */
    static void write(Path dir, int policies) throws IOException {
        write(dir.resolve("namespace.yaml"), """
                apiVersion: v1
                kind: Namespace
                metadata:
                  name: bench
                  labels: {name: bench}
                """);
        write(dir.resolve("pods.yaml"), pod("server", SERVER_IP) + "---\n" + pod("client", "10.77.0.20") + "---\n"
                + pod("intruder", INTRUDER_IP));
        write(dir.resolve("services.yaml"), """
                apiVersion: v1
                kind: Service
                metadata:
                  name: server
                  namespace: bench
                spec:
                  clusterIP: %s
                  selector: {app: server}
                  ports:
                    - {name: rate, port: %d, protocol: TCP}
                    - {name: iperf, port: %d, protocol: TCP}
                """.formatted(SERVICE_IP, RATE_PORT, IPERF_PORT));
        if (policies > 0) {
            write(dir.resolve("policies.yaml"), policies(policies) + "---\n" + clientEgressPolicy());
        }
    }

    /** How many policies the agent applies for a point of {@code policies}: those and the client's egress policy. */
    static int applied(int policies) {
        return policies > 0 ? policies + 1 : 0;
    }

    /** Isolates the client's egress, admitting the server pods on both benchmark ports. */
    static String clientEgressPolicy() {
        return header(CLIENT_EGRESS, "{matchLabels: {app: client}}", "Egress") + """
                  egress:
                    - to: [{podSelector: {matchLabels: {app: server}}}]
                      ports: [{port: %d}, {port: %d}]
                """.formatted(RATE_PORT, IPERF_PORT);
    }

    private static String pod(String name, String ip) {
        return """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: %1$s
                  namespace: bench
                  labels: {app: %1$s}
                spec:
                  containers: [{name: main, image: bench}]
                status:
                  phase: Running
                  podIP: %2$s
                """.formatted(name, ip);
    }

    /** {@code n} policies selecting the server, as one multi-document YAML text; the client's is the last. */
    static String policies(int n) {
        StringBuilder sb = new StringBuilder();
        int width = Math.max(4, Integer.toString(n - 1).length());
        for (int i = 0; i < n - 1; i++) {
            sb.append("---\n").append(otherPolicy(name(i, width, SHAPE_NAMES[i % SHAPES]), i));
        }
        sb.append("---\n").append(clientPolicy(name(n - 1, width, "client")));
        return sb.toString();
    }

    private static final String[] SHAPE_NAMES = {"pod-peer", "ns-peer", "ipblock", "other-port", "pod-and-ns", "ipblock-except", "udp"};

    private static String name(int i, int width, String shape) {
        return String.format(Locale.ROOT, "p%0" + width + "d-%s", i, shape);
    }

    /** The one policy that admits the client: TCP to both benchmark ports. */
    static String clientPolicy(String name) {
        return header(name, "{matchLabels: {app: server}}") + """
                  ingress:
                    - from: [{podSelector: {matchLabels: {app: client}}}]
                      ports: [{port: %d}, {port: %d}]
                """.formatted(RATE_PORT, IPERF_PORT);
    }

    /** Policy number {@code i}: one of {@link #SHAPES} shapes, none of which admits the client or the intruder on a benchmark port. */
    static String otherPolicy(String name, int i) {
        String server = "{matchLabels: {app: server}}";
        return switch (i % SHAPES) {
            case 0 -> header(name, server) + """
                      ingress:
                        - from: [{podSelector: {matchLabels: {app: peer-%d}}}]
                          ports: [{port: %d}, {port: %d}]
                    """.formatted(i, RATE_PORT, IPERF_PORT);
            case 1 -> header(name, server) + """
                      ingress:
                        - from: [{namespaceSelector: {matchLabels: {team: team-%d}}}]
                          ports: [{port: %d}]
                    """.formatted(i, RATE_PORT);
            case 2 -> header(name, server) + """
                      ingress:
                        - from: [{ipBlock: {cidr: %s/32}}]
                    """.formatted(ipv4(0x0AC8_0000 + i)); // 10.200.0.0 + i
            case 3 -> header(name, server) + """
                      ingress:
                        - from: [{podSelector: {matchLabels: {app: client}}}]
                          ports: [{port: %d}]
                    """.formatted(20000 + i % 40000);
            case 4 -> header(name, "{matchExpressions: [{key: app, operator: In, values: [server, server-canary-" + i + "]}]}") + """
                      ingress:
                        - from:
                            - namespaceSelector: {matchExpressions: [{key: env, operator: In, values: [env-%1$d]}]}
                              podSelector: {matchExpressions: [{key: app, operator: In, values: [svc-%1$d-a, svc-%1$d-b]}]}
                    """.formatted(i);
            case 5 -> header(name, server) + """
                      ingress:
                        - from: [{ipBlock: {cidr: %1$s/24, except: [%1$s/28]}}]
                          ports: [{port: 5000, endPort: 5300}]
                    """.formatted(ipv4(0x6440_0000 + ((long) i << 8))); // 100.64.0.0 + i * 256
            default -> header(name, server) + """
                      ingress:
                        - from: [{podSelector: {matchLabels: {app: client}}}]
                          ports: [{protocol: UDP, port: %d, endPort: %d}]
                    """.formatted(RATE_PORT, RATE_PORT + 1 + i % 60000);
        };
    }

    private static String header(String name, String podSelector) {
        return header(name, podSelector, "Ingress");
    }

    private static String header(String name, String podSelector, String policyType) {
        return """
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicy
                metadata:
                  name: %s
                  namespace: bench
                spec:
                  podSelector: %s
                  policyTypes: [%s]
                """.formatted(name, podSelector, policyType);
    }

    /** An IPv4 address in dotted form; none of those used here is near the pods' 10.77.0.0/24. */
    private static String ipv4(long value) {
        return ((value >> 24) & 0xff) + "." + ((value >> 16) & 0xff) + "." + ((value >> 8) & 0xff) + "." + (value & 0xff);
    }

    private static void write(Path file, String text) throws IOException {
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }
}
