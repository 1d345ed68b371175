package io.npmagent.harness.sandbox;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.ProcessRunner;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Tries every ordered pair of distinct pods on every port and protocol the destination serves, in both
 * families where both have an address, and every Service port from every pod through its ClusterIP
 * ({@link ServiceTargets}): one prober process per source pod, inside that pod's namespace, all running
 * at once, each trying all of its targets at once. A TCP connect or a UDP echo within the
 * timeout is "allowed"; silence is "denied" (the backends drop); a refusal or an unreachable network is
 * an error, never a verdict.
 */
public final class Prober {
    private static final Gson GSON = new Gson();

    /**
     * One probe's outcome. {@code error} is null for a verdict. Through a Service: {@code service} names it,
     * {@code port} is the Service's, {@code to} the backend pod when it has exactly one (else null).
     */
    public record Result(String from, String to, String service, String family, int port, String protocol, boolean allowed,
            String error) {}

    private Prober() {}

    public static List<Result> probeAll(Sandbox sandbox, Duration timeout, List<ServiceTargets.Target> services) throws IOException {
        List<Sandbox.PodRecord> pods = sandbox.pods();
        Path script = sandbox.script("prober.py");
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, pods.size()));
        try {
            List<Future<List<Result>>> futures = new ArrayList<>();
            for (Sandbox.PodRecord from : pods) {
                futures.add(pool.submit(() -> probeFrom(from, pods, services, script, timeout)));
            }
            List<Result> out = new ArrayList<>();
            for (Future<List<Result>> f : futures) {
                out.addAll(f.get());
            }
            out.sort(Comparator.comparing(Result::from).thenComparing(r -> Objects.requireNonNullElse(r.service(), ""))
                    .thenComparing(r -> Objects.requireNonNullElse(r.to(), "")).thenComparing(Result::protocol)
                    .thenComparingInt(Result::port).thenComparing(Result::family));
            return out;
        } catch (Exception e) {
            throw new IOException("probing failed: " + e.getMessage(), e);
        } finally {
            pool.shutdownNow();
        }
    }

    private static List<Result> probeFrom(Sandbox.PodRecord from, List<Sandbox.PodRecord> pods, List<ServiceTargets.Target> services,
            Path script, Duration timeout) {
        List<Result> targets = new ArrayList<>();
        List<List<Object>> request = new ArrayList<>();
        for (Sandbox.PodRecord to : pods) {
            if (to.pod().equals(from.pod())) {
                continue;
            }
            for (String family : List.of("IPv4", "IPv6")) {
                String src = address(from, family);
                String dst = address(to, family);
                if (src == null || dst == null) {
                    continue;
                }
                for (String served : to.served()) {
                    String[] pp = served.split(":");
                    int port = Integer.parseInt(pp[1]);
                    targets.add(new Result(from.pod(), to.pod(), null, family, port, pp[0].toUpperCase(Locale.ROOT), false, null));
                    request.add(List.of(dst, port, pp[0]));
                }
            }
        }
        for (ServiceTargets.Target t : services) {
            if (address(from, t.family()) != null) {
                targets.add(new Result(from.pod(), t.backend(), t.service(), t.family(), t.port(), t.protocol(), false, null));
                request.add(List.of(t.clusterIp(), t.port(), t.protocol().toLowerCase(Locale.ROOT)));
            }
        }
        if (targets.isEmpty()) {
            return List.of();
        }
        String input = GSON.toJson(Map.of("timeout", timeout.toMillis() / 1000.0, "targets", request));
        CommandResult r = ProcessRunner.host().run(from.command(List.of("python3", script.toString())), input, timeout.plusSeconds(30));
        if (!r.ok()) {
            throw new IllegalStateException("the prober in " + from.pod() + " failed: " + r.errorSummary());
        }
        JsonArray answers = GSON.fromJson(r.stdout(), JsonArray.class);
        List<Result> out = new ArrayList<>();
        for (int i = 0; i < targets.size(); i++) {
            JsonArray a = answers.get(i).getAsJsonArray();
            JsonElement error = a.get(1);
            Result t = targets.get(i);
            out.add(new Result(t.from(), t.to(), t.service(), t.family(), t.port(), t.protocol(), a.get(0).getAsBoolean(),
                    error.isJsonNull() ? null : error.getAsString()));
        }
        return out;
    }

    private static String address(Sandbox.PodRecord pod, String family) {
        for (String ip : pod.ips()) {
            if (ip.contains(":") == family.equals("IPv6")) {
                return ip;
            }
        }
        return null;
    }
}
