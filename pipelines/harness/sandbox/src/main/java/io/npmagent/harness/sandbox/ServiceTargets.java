package io.npmagent.harness.sandbox;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.DiscoveryV1Api;
import io.kubernetes.client.openapi.models.V1Endpoint;
import io.kubernetes.client.openapi.models.V1EndpointSlice;
import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1ServicePort;
import io.npmagent.harness.controlplane.ControlPlane;
import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.ProcessRunner;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The Service ports a probe tries through their ClusterIPs, from the API server: every port (TCP, UDP)
 * of every Service with a cluster IP, in each family it has one, with its backends from the
 * EndpointSlices. {@code default/kubernetes} is left out: its backend, the API server, listens on the
 * host's loopback, which no pod reaches. Before probing, {@link #await} waits until every node's
 * kube-proxy has written each Service's DNAT to each ready backend into its node's namespace, which each
 * does on its own time after the EndpointSlice changes.
 */
public final class ServiceTargets {
    /** One Service port on one ClusterIP; {@code backend} the pod when the Service has exactly one, else null. */
    public record Target(String service, String clusterIp, String family, int port, String protocol, String backend,
            List<String> dnats) {}

    private ServiceTargets() {}

    /** The targets once kube-proxy programs them all, or NotConverged naming one it has not within {@code wait}. */
    public static List<Target> await(Sandbox sandbox, Duration wait) throws IOException, Convergence.NotConverged {
        ApiClient admin = ControlPlane.client(sandbox.adminKubeconfig());
        List<SandboxNode> nodes = sandbox.nodes();
        Instant deadline = Instant.now().plus(wait);
        while (true) {
            List<Target> targets = list(admin);
            Target missing = null;
            SandboxNode on = null;
            for (SandboxNode node : nodes) {
                missing = firstUnprogrammed(targets, rules(node));
                if (missing != null) {
                    on = node;
                    break;
                }
            }
            if (missing == null) {
                return targets;
            }
            if (Instant.now().isAfter(deadline)) {
                throw new Convergence.NotConverged("kube-proxy on " + on.name() + " has not programmed Service " + missing.service() + " port "
                        + missing.port() + "/" + missing.protocol() + " on " + missing.clusterIp() + " (DNAT to " + missing.dnats()
                        + ") within " + wait.toSeconds() + " s; its log is " + on.stateDir().resolve("kube-proxy.log"));
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Convergence.NotConverged("interrupted");
            }
        }
    }

    static List<Target> list(ApiClient admin) throws IOException {
        try {
            List<V1EndpointSlice> slices = new DiscoveryV1Api(admin).listEndpointSliceForAllNamespaces().execute().getItems();
            List<Target> out = new ArrayList<>();
            for (V1Service s : new CoreV1Api(admin).listServiceForAllNamespaces().execute().getItems()) {
                String ns = s.getMetadata().getNamespace();
                String name = s.getMetadata().getName();
                List<String> clusterIps = s.getSpec().getClusterIPs();
                if ((ns.equals("default") && name.equals("kubernetes")) || clusterIps == null) {
                    continue;
                }
                List<V1EndpointSlice> mine = slices.stream().filter(e -> ns.equals(e.getMetadata().getNamespace())
                        && e.getMetadata().getLabels() != null && name.equals(e.getMetadata().getLabels().get("kubernetes.io/service-name")))
                        .toList();
                Set<String> pods = new TreeSet<>();
                for (V1EndpointSlice slice : mine) {
                    for (V1Endpoint ep : slice.getEndpoints()) {
                        if (ready(ep) && ep.getTargetRef() != null && "Pod".equals(ep.getTargetRef().getKind())) {
                            pods.add(ep.getTargetRef().getNamespace() + "/" + ep.getTargetRef().getName());
                        }
                    }
                }
                String backend = pods.size() == 1 ? pods.iterator().next() : null;
                for (String ip : clusterIps) {
                    if (ip.equals("None")) {
                        continue;
                    }
                    String family = ip.contains(":") ? "IPv6" : "IPv4";
                    for (V1ServicePort p : s.getSpec().getPorts()) {
                        String protocol = Objects.requireNonNullElse(p.getProtocol(), "TCP").toUpperCase(Locale.ROOT);
                        if (protocol.equals("TCP") || protocol.equals("UDP")) {
                            out.add(new Target(ns + "/" + name, ip, family, p.getPort(), protocol, backend,
                                    dnats(mine, family, p.getName(), protocol)));
                        }
                    }
                }
            }
            return out;
        } catch (ApiException e) {
            throw new IOException("listing Services and EndpointSlices: " + e.getCode() + " " + e.getResponseBody(), e);
        }
    }

    private static boolean ready(V1Endpoint ep) {
        return ep.getConditions() == null || !Boolean.FALSE.equals(ep.getConditions().getReady());
    }

    /** "IP:port" (IPv6 in brackets) of each ready backend of the port named {@code portName}: what kube-proxy's DNAT names. */
    private static List<String> dnats(List<V1EndpointSlice> slices, String family, String portName, String protocol) {
        List<String> out = new ArrayList<>();
        for (V1EndpointSlice slice : slices) {
            if (!slice.getAddressType().equals(family) || slice.getPorts() == null) {
                continue;
            }
            Integer port = slice.getPorts().stream()
                    .filter(p -> Objects.equals(Objects.requireNonNullElse(p.getName(), ""), Objects.requireNonNullElse(portName, ""))
                            && protocol.equalsIgnoreCase(Objects.requireNonNullElse(p.getProtocol(), "TCP")))
                    .map(p -> p.getPort()).findFirst().orElse(null);
            if (port == null) {
                continue;
            }
            for (V1Endpoint ep : slice.getEndpoints()) {
                if (ready(ep)) {
                    for (String a : ep.getAddresses()) {
                        out.add((a.contains(":") ? "[" + a + "]" : a) + ":" + port);
                    }
                }
            }
        }
        return out;
    }

    /** The first target whose DNATs are not all in kube-proxy's rules yet (iptables or nftables mode), or null. */
    static Target firstUnprogrammed(List<Target> targets, String rules) {
        for (Target t : targets) {
            for (String dnat : t.dnats()) {
                // Whole: 10.250.0.2:80 is not 10.250.0.2:8080.
                if (!Pattern.compile("(--to-destination|dnat to) " + Pattern.quote(dnat) + "(?![0-9])").matcher(rules).find()) {
                    return t;
                }
            }
        }
        return null;
    }

    /** kube-proxy's NAT rules in a node's namespace, whichever mode wrote them. */
    private static String rules(SandboxNode sandboxNode) {
        StringBuilder sb = new StringBuilder();
        ProcessRunner node = ProcessRunner.inNamespace(sandboxNode.netns());
        for (List<String> argv : List.of(List.of("iptables-save", "-t", "nat"), List.of("ip6tables-save", "-t", "nat"),
                List.of("nft", "list", "table", "ip", "kube-proxy"), List.of("nft", "list", "table", "ip6", "kube-proxy"))) {
            CommandResult r = node.run(argv, "", Duration.ofSeconds(10));
            if (r.ok()) {
                sb.append(r.stdout()).append('\n');
            }
        }
        return sb.toString();
    }
}
