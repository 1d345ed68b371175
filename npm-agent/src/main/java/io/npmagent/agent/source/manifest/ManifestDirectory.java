package io.npmagent.agent.source.manifest;

import io.npmagent.dataplane.model.ClusterNetworkPolicy;
import io.npmagent.dataplane.model.ClusterState;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A manifest directory as a source of cluster snapshots: the agent's stand-in for an API server.
 *
 * <p><b>Generations.</b> The directory's content is named by a hash of its manifest files (names and
 * bytes), {@link #hash}, which anyone can compute: a tool that wrote the directory knows which
 * generation to wait for. {@link #scan} reads the directory only when that hash changed.
 *
 * <p><b>Nothing is lost to a bad edit.</b> Each file is parsed on its own. An object that was in a file
 * and is missing from a new version of it that has problems (a document that does not parse, as in a
 * half-written file) is kept as it was, and the problem is reported; an object removed from a file that
 * parses cleanly is deleted. So a typo never deletes a policy, which would open traffic.
 */
public final class ManifestDirectory {
    private final Path dir;
    private final Map<String, ParsedManifests> lastGood = new TreeMap<>();
    private String hash = "";

    /** One reading of the directory. */
    public record Snapshot(String hash, ClusterState state, List<String> problems) {}

    public ManifestDirectory(Path dir) {
        this.dir = dir;
    }

    public Path dir() {
        return dir;
    }

    /** A new snapshot if the directory changed since the last call (or on the first call), else null. */
    public Snapshot scan() throws IOException {
        String now = hash(dir);
        if (now.equals(hash)) {
            return null;
        }
        List<String> problems = new ArrayList<>();
        Map<String, ParsedManifests> parsed = new TreeMap<>();
        String prefix = Manifests.prefix(dir);
        for (Path file : Manifests.files(dir)) {
            String name = file.getFileName().toString();
            String text;
            try {
                text = Manifests.read(file);
            } catch (IOException e) {
                // Unreadable now (too large, not UTF-8, gone mid-scan): as a file that does not parse.
                text = null;
                problems.add(prefix + name + ": cannot read: " + e.getMessage());
            }
            ParsedManifests fresh = text == null
                    ? new ParsedManifests(List.of(), List.of(), List.of(), List.of(), List.of("unreadable"))
                    : Manifests.parse(text, prefix + name);
            if (text != null) {
                problems.addAll(fresh.errors());
            }
            parsed.put(name, keepWhatABadEditDropped(prefix + name, lastGood.get(name), fresh, problems));
        }
        lastGood.clear();
        lastGood.putAll(parsed);
        hash = now;
        return new Snapshot(now, merge(parsed, problems), problems);
    }

    private static ParsedManifests keepWhatABadEditDropped(String where, ParsedManifests before, ParsedManifests now, List<String> problems) {
        if (before == null || now.errors().isEmpty()) {
            return now;
        }
        Map<String, Namespace> ns = new LinkedHashMap<>();
        now.namespaces().forEach(n -> ns.put(n.name(), n));
        Map<Object, Pod> pods = new LinkedHashMap<>();
        now.pods().forEach(p -> pods.put(p.key(), p));
        Map<Object, NetworkPolicy> policies = new LinkedHashMap<>();
        now.policies().forEach(p -> policies.put(p.key(), p));
        Map<String, ClusterNetworkPolicy> clusterPolicies = new LinkedHashMap<>();
        now.clusterPolicies().forEach(p -> clusterPolicies.put(p.name(), p));
        for (Namespace n : before.namespaces()) {
            if (ns.putIfAbsent(n.name(), n) == null) {
                problems.add(where + ": kept Namespace " + n.name() + " as it was until the file loads again");
            }
        }
        for (Pod p : before.pods()) {
            if (pods.putIfAbsent(p.key(), p) == null) {
                problems.add(where + ": kept Pod " + p.key() + " as it was until the file loads again");
            }
        }
        for (NetworkPolicy p : before.policies()) {
            if (policies.putIfAbsent(p.key(), p) == null) {
                problems.add(where + ": kept NetworkPolicy " + p.key() + " as it was until the file loads again");
            }
        }
        for (ClusterNetworkPolicy p : before.clusterPolicies()) {
            if (clusterPolicies.putIfAbsent(p.name(), p) == null) {
                problems.add(where + ": kept ClusterNetworkPolicy " + p.name() + " as it was until the file loads again");
            }
        }
        return new ParsedManifests(new ArrayList<>(ns.values()), new ArrayList<>(pods.values()),
                new ArrayList<>(policies.values()), new ArrayList<>(clusterPolicies.values()), now.errors());
    }

    private static ClusterState merge(Map<String, ParsedManifests> files, List<String> problems) {
        TreeMap<String, Namespace> ns = new TreeMap<>();
        TreeMap<PodKey, Pod> pods = new TreeMap<>();
        TreeMap<PolicyKey, NetworkPolicy> policies = new TreeMap<>();
        TreeMap<String, ClusterNetworkPolicy> clusterPolicies = new TreeMap<>();
        Map<Object, String> where = new LinkedHashMap<>();
        files.forEach((file, p) -> {
            p.namespaces().forEach(n -> duplicate(where, "Namespace " + n.name(), file, problems, ns.put(n.name(), n)));
            p.pods().forEach(pod -> duplicate(where, "Pod " + pod.key(), file, problems, pods.put(pod.key(), pod)));
            p.policies().forEach(pol -> duplicate(where, "NetworkPolicy " + pol.key(), file, problems, policies.put(pol.key(), pol)));
            p.clusterPolicies().forEach(pol -> duplicate(where, "ClusterNetworkPolicy " + pol.name(), file, problems,
                    clusterPolicies.put(pol.name(), pol)));
        });
        return new ClusterState(ns, pods, policies, clusterPolicies, new TreeMap<>());
    }

    private static void duplicate(Map<Object, String> where, String object, String file, List<String> problems, Object replaced) {
        String first = where.putIfAbsent(object, file);
        if (replaced != null && first != null) {
            problems.add(object + " is in both " + first + " and " + file + "; the one in " + file + " is used");
        }
    }

    /**
     * The directory's generation: a hash of every manifest file's name and bytes, in name order.
     * Files are those {@link Manifests#load} reads. A file removed while hashing counts as absent.
     */
    public static String hash(Path dir) throws IOException {
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        for (Path file : Manifests.files(dir)) {
            digest.update(file.getFileName().toString().getBytes(StandardCharsets.UTF_8));
            digest.update((byte) 0);
            digest.update(Files.readAllBytes(file));
            digest.update((byte) 0);
        }
        return HexFormat.of().formatHex(digest.digest(), 0, 12);
    }
}
