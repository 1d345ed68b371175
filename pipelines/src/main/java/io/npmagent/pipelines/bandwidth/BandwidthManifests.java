package io.npmagent.pipelines.bandwidth;

import io.npmagent.dataplane.bandwidth.BandwidthAnnotations;
import io.npmagent.dataplane.bandwidth.CongestionAnnotation;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.TreeMap;

/**
 * The manifest directory of one point: namespace {@code bw} with a client and a server pod at fixed
 * addresses and no policy, the client optionally annotated with an egress limit (and its TCP congestion
 * control) and the server with an ingress limit. The benchmark ports are not declared as container
 * ports, so the sandbox starts no server of its own on them.
 */
final class BandwidthManifests {
    static final String CLIENT = "bw/client";
    static final String SERVER = "bw/server";
    static final String SERVER_IP = "10.78.0.10";
    static final int IPERF_PORT = 5201;
    static final int RR_PORT = 7000;

    private BandwidthManifests() {}

    /**
     * Writes the directory; a rate is an annotation value ({@code 100M}) or null for no limit. The file
     * is replaced in one rename: a sandbox watching the directory never reads half of it (a pod missing
     * for a moment would be torn down and built again).
     */
    static void write(Path dir, String clientEgress, String serverIngress) throws IOException {
        write(dir, clientEgress == null ? Map.of() : Map.of(BandwidthAnnotations.EGRESS, clientEgress),
                serverIngress == null ? Map.of() : Map.of(BandwidthAnnotations.INGRESS, serverIngress));
    }

    /** The client limited to {@code clientEgress}, its connections on {@code congestion} ({@code npm-agent.io/tcp-congestion}). */
    static void writeClient(Path dir, String clientEgress, String congestion) throws IOException {
        write(dir, Map.of(BandwidthAnnotations.EGRESS, clientEgress, CongestionAnnotation.ANNOTATION, congestion), Map.of());
    }

    private static void write(Path dir, Map<String, String> client, Map<String, String> server) throws IOException {
        Files.createDirectories(dir);
        Path next = dir.resolve(".pods.yaml.next");
        Files.writeString(next, """
                apiVersion: v1
                kind: Namespace
                metadata:
                  name: bw
                ---
                """ + pod("server", SERVER_IP, server) + "---\n" + pod("client", "10.78.0.20", client), StandardCharsets.UTF_8);
        Files.move(next, dir.resolve("pods.yaml"), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static String pod(String name, String ip, Map<String, String> annotations) {
        StringBuilder a = new StringBuilder();
        new TreeMap<>(annotations).forEach((k, v) -> a.append("    ").append(k).append(": \"").append(v).append("\"\n"));
        return """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: %1$s
                  namespace: bw
                %3$sspec:
                  containers:
                  - name: main
                    image: bench
                status:
                  podIP: %2$s
                """.formatted(name, ip, a.length() == 0 ? "" : "  annotations:\n" + a);
    }
}
