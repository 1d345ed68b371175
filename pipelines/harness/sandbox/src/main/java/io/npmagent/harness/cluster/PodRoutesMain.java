package io.npmagent.harness.cluster;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeAddress;
import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.ProcessRunner;
import io.npmagent.harness.controlplane.ControlPlane;
import io.npmagent.harness.process.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The {@code host-gw} pod network's route keeper on one node, as kind's kindnetd is: every
 * {@value #INTERVAL_SECONDS} s it lists the Nodes and makes this node's routes to every other node's pod
 * ranges (each via that node's InternalIP of the range's family) what the Nodes say: new ranges routed,
 * changed gateways replaced, ranges of nodes gone removed. Its routes carry protocol {@value #PROTO},
 * so it finds its own and touches no other. Runs in the node's network namespace ({@link HostGw}).
 */
@Command(name = "pod-routes", mixinStandardHelpOptions = true, description = "Keep this node's routes to the other nodes' pod ranges.")
public final class PodRoutesMain implements Callable<Integer> {
    static final String PROTO = "200";
    static final int INTERVAL_SECONDS = 2;

    @Option(names = "--node", required = true, paramLabel = "NAME", description = "This node's name.")
    String node;

    @Option(names = "--kubeconfig", required = true, paramLabel = "FILE", description = "Credentials that may list Nodes.")
    Path kubeconfig;

    private final ProcessRunner ip = ProcessRunner.host();

    public static void main(String[] args) {
        System.exit(new CommandLine(new PodRoutesMain()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        ApiClient client = ControlPlane.client(kubeconfig);
        CoreV1Api api = new CoreV1Api(client);
        while (true) {
            try {
                Map<String, String> want = wanted(api.listNode().execute().getItems(), node);
                for (List<String> argv : changes(want, current("-4"), current("-6"))) {
                    CommandResult r = ip.run(argv, "", Duration.ofSeconds(10));
                    System.err.println("pod-routes: " + String.join(" ", argv) + (r.ok() ? "" : ": " + r.errorSummary()));
                }
            } catch (Exception e) {
                // The API server away for a moment: the routes stay as they are until it is back.
                System.err.println("pod-routes: " + e.getMessage());
            }
            Await.sleep(Duration.ofSeconds(INTERVAL_SECONDS));
        }
    }

    /** Every other node's pod range and the address that reaches it: that node's InternalIP of the range's family. */
    static Map<String, String> wanted(List<V1Node> nodes, String self) {
        Map<String, String> want = new LinkedHashMap<>();
        for (V1Node n : nodes) {
            if (n.getMetadata() == null || self.equals(n.getMetadata().getName()) || n.getSpec() == null || n.getStatus() == null) {
                continue;
            }
            List<String> cidrs = Objects.requireNonNullElse(n.getSpec().getPodCIDRs(), List.of());
            List<V1NodeAddress> addresses = Objects.requireNonNullElse(n.getStatus().getAddresses(), List.of());
            for (String cidr : cidrs) {
                addresses.stream().filter(a -> "InternalIP".equals(a.getType()) && a.getAddress().contains(":") == cidr.contains(":"))
                        .findFirst().ifPresent(a -> want.put(cidr, a.getAddress()));
            }
        }
        return want;
    }

    /**
     * The {@code ip} commands (argv, no shell: the addresses come from Node objects) that make the routes of protocol {@value #PROTO} (as {@code ip route show}
     * prints them, a line each) what {@code want} says.
     */
    static List<List<String>> changes(Map<String, String> want, List<String> v4, List<String> v6) {
        Map<String, String> have = new LinkedHashMap<>();
        for (String line : concat(v4, v6)) {
            String[] f = line.strip().split("\\s+");
            int via = List.of(f).indexOf("via");
            if (f.length > 0 && !f[0].isEmpty()) {
                have.put(f[0], via > 0 && via + 1 < f.length ? f[via + 1] : "");
            }
        }
        List<List<String>> out = new ArrayList<>();
        want.forEach((cidr, gw) -> {
            if (!gw.equals(have.get(cidr))) {
                out.add(List.of("ip", "route", "replace", cidr, "via", gw, "dev", "eth0", "proto", PROTO));
            }
        });
        have.keySet().stream().filter(cidr -> !want.containsKey(cidr)).forEach(cidr -> out.add(List.of("ip", "route", "del", cidr, "proto", PROTO)));
        return out;
    }

    private List<String> current(String family) {
        CommandResult r = ip.run(List.of("ip", family, "route", "show", "proto", PROTO), "", Duration.ofSeconds(10));
        return r.ok() ? r.stdout().lines().toList() : List.of();
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
