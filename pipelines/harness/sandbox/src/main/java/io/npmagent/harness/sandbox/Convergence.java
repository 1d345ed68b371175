package io.npmagent.harness.sandbox;

import io.kubernetes.client.openapi.ApiClient;
import io.npmagent.harness.controlplane.ControlPlane;
import io.npmagent.agent.run.AgentStatus;
import io.npmagent.agent.source.k8s.ServerDigest;
import io.npmagent.agent.source.manifest.ManifestDirectory;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Waiting for a sandbox to have what its API server holds now, with the manifest directory as it is now
 * in it: the node daemon has applied the directory's generation (its content hash) to the server and
 * built every pod for the server's objects, and every node's agent has those objects' state in its
 * node's kernel. The objects are named by a {@link ServerDigest}, which the daemon, each agent and this
 * check compute.
 */
public final class Convergence {
    private Convergence() {}

    /** The sandbox did not converge in time, or its agent is gone; the message says what it was doing. */
    public static final class NotConverged extends Exception {
        private static final long serialVersionUID = 1L;

        NotConverged(String message) {
            super(message);
        }
    }

    /** Waits as above; returns node 0's agent's status. */
    public static AgentStatus await(Sandbox sandbox, Duration timeout) throws IOException, NotConverged {
        Sandbox.Spec spec = sandbox.spec();
        List<SandboxNode> nodes = sandbox.nodes();
        Instant deadline = Instant.now().plus(timeout);
        ApiClient admin = null;
        String server = "";
        while (true) {
            String hash = ManifestDirectory.hash(Path.of(spec.manifests()));
            NodeStatus node = NodeStatus.read(sandbox.dir());
            AgentStatus first = null;
            SandboxNode behind = null; // the first node whose agent has not applied what the nodes are built for
            AgentStatus behindStatus = null;
            for (SandboxNode n : nodes) {
                AgentStatus s = AgentStatus.read(n.stateDir());
                first = n.index() == 0 ? s : first;
                if (behind == null && (s == null || node == null || !node.builtDigest().equals(s.appliedHash()))) {
                    behind = n;
                    behindStatus = s;
                }
            }
            if (node != null && hash.equals(node.manifestsHash()) && !node.builtDigest().isEmpty() && behind == null) {
                if (admin == null) {
                    admin = ControlPlane.client(sandbox.adminKubeconfig());
                }
                // The server may have moved on since (kubectl, another tool): both must have caught up with it now.
                server = ServerDigest.of(admin);
                if (server.equals(node.builtDigest())) {
                    return first;
                }
            }
            if (!ProcessHandle.of(spec.daemonPid()).map(ProcessHandle::isAlive).orElse(false)) {
                throw new NotConverged("the node daemon of sandbox " + sandbox.name() + " is not running; its logs are "
                        + sandbox.dir().resolve("daemon.log") + " and " + sandbox.dir().resolve("agent.log")
                        + " (npm-agent sandbox down --name " + sandbox.name() + " cleans up)");
            }
            if (Instant.now().isAfter(deadline)) {
                throw new NotConverged("sandbox " + sandbox.name() + " has not applied " + spec.manifests() + " (generation "
                        + hash + ") within " + timeout.toSeconds() + " s: " + describe(node, hash) + "; "
                        + (behind == null ? "every agent has applied it" : (nodes.size() > 1 ? "on " + behind.name() + ", " : "") + describe(behindStatus)));
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new NotConverged("interrupted");
            }
        }
    }

    private static String describe(NodeStatus node, String hash) {
        if (node == null) {
            return "the node daemon has reported nothing yet (the cluster may still be starting)";
        }
        return (hash.equals(node.manifestsHash()) ? "the directory is in the API server" : "the directory is not all in the API server yet")
                + (node.builtDigest().isEmpty() ? ", the node's pods are being built" : ", the node's pods are built for " + node.builtDigest())
                + (node.rejected().isEmpty() ? "" : "; the API server refused: " + String.join("; ", node.rejected()));
    }

    private static String describe(AgentStatus s) {
        if (s == null) {
            return "the agent has reported nothing yet";
        }
        return "the agent has seen " + s.seenHash() + ", has "
                + (s.appliedHash().isEmpty() ? "applied nothing" : "applied " + s.appliedHash())
                + (s.denied().isEmpty() ? "" : "; the API server forbids it: " + String.join("; ", s.denied()))
                + (s.failures().isEmpty() ? "" : "; refused: " + String.join("; ", s.failures()))
                + (s.problems().isEmpty() ? "" : "; problems: " + String.join("; ", s.problems()));
    }
}
