package io.npmagent.pipelines.upstream;

import io.npmagent.harness.cluster.ClusterConfig;
import io.npmagent.harness.cluster.Node;
import io.npmagent.harness.process.Daemon;
import io.npmagent.harness.process.Logs;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The kernel's side of every cyclonus probe: on each node, {@code conntrack -E} logs each reply that
 * passes between pods (kube-proxy's DNAT on the client's node sees both directions on every backend, and a
 * cross-node probe is tracked on the server's node too), so the report holds each probe's result against
 * what the network did, and a wrong probe says whether the dataplane let it through or the probe's exec
 * misreported. One capture per node ({@code FILE.<node>}); {@link #stop} joins them into {@code FILE}, which
 * the report reads as one. A capture that ended on its own before the run did is no reason to stop: it is
 * written down in {@code FILE.ended} (its exit status and last words), and the report counts no probe
 * after its last event.
 */
final class NodeCaptures {
    private final Path file;
    private final List<Node> nodes;
    private final List<Daemon> captures = new ArrayList<>();

    private NodeCaptures(Path file, List<Node> nodes) {
        this.file = file;
        this.nodes = nodes;
    }

    static NodeCaptures start(Path file, List<Node> nodes) throws IOException {
        NodeCaptures c = new NodeCaptures(file, nodes);
        String pods = ClusterConfig.POD_CIDRS.split(",")[0];
        for (Node node : nodes) {
            Path log = file.resolveSibling(file.getFileName() + "." + node.name());
            Files.deleteIfExists(log);
            c.captures.add(Daemon.of("conntrack on " + node.name(), log,
                    List.of("conntrack", "-E", "-e", "UPDATE", "-o", "timestamp", "-b", "33554432", "-s", pods)).entering(node.nsenter()).start());
        }
        return c;
    }

    /** Ends the captures and joins them into the capture file; says of one that had ended by itself. */
    synchronized void stop() throws IOException {
        for (int i = 0; i < captures.size(); i++) {
            Daemon d = captures.get(i);
            if (d.alive()) {
                d.stop(Duration.ofSeconds(5));
            } else {
                String why = "conntrack on " + nodes.get(i).name() + " exited by itself with status " + d.process().exitValue() + "\n"
                        + Logs.tail(d.log(), 3) + "\n";
                Files.writeString(ended(), why, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                System.out.println("upstream-suites: " + nodes.get(i).name() + "'s conntrack capture ended before the run did (" + d.log() + ")");
            }
            if (Files.exists(d.log())) {
                Files.write(file, Files.readAllBytes(d.log()), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            }
        }
        captures.clear();
    }

    private Path ended() {
        return file.resolveSibling(file.getFileName() + ".ended");
    }
}
