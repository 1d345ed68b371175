package io.npmagent.pipelines.swarm;

import io.npmagent.pipelines.bench.BenchApiServer;
import io.npmagent.pipelines.bench.PromText;
import java.io.IOException;

/**
 * Which cores do what: kube-apiserver and etcd on core 0, everything else (this JVM and what it starts:
 * the swarm, the load generator, the real agent, the controller manager) on core 1, so the control
 * plane's cost shows on its own and the swarm's own work cannot hide in it. {@code taskset -a}: every
 * thread now, and the threads they start inherit it.
 */
final class CpuPinning {
    static final int CONTROL_PLANE = 0;
    /** Where the harness runs: the swarm, the load generator, the real agents. What it leaves idle is read per profile. */
    static final int HARNESS = 1;

    private CpuPinning() {}

    static boolean possible() {
        return Runtime.getRuntime().availableProcessors() >= 2;
    }

    static void pin(long pid, int core) {
        pin(pid, Integer.toString(core));
    }

    /**
     * Waits until the API server runs on one core as one: its Go runtime's GOMAXPROCS follows the new
     * affinity (the control plane starts with {@code GODEBUG=updatemaxprocs=1}) within a second or so, as on
     * a server of one core. A {@code GOMAXPROCS} in the environment (the control plane inherits it) is kept
     * instead, to compare: with two Ps on the one core its scheduler and garbage collector behave as on
     * a server of two, the OS sharing one core between them. Returns the API server's GOMAXPROCS.
     */
    static int awaitGomaxprocs(BenchApiServer api) throws InterruptedException {
        String fixed = System.getenv("GOMAXPROCS");
        int want = fixed == null || fixed.isBlank() ? 1 : Integer.parseInt(fixed.trim());
        double procs = Double.NaN;
        for (int i = 0; i < 50; i++) {
            String metrics = api.admin().raw("/metrics");
            procs = metrics == null ? Double.NaN : PromText.total(metrics, "go_sched_gomaxprocs_threads");
            if (procs == want) {
                return want;
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("kube-apiserver, pinned to one core, runs GOMAXPROCS=" + procs + " after 10 s, not " + want);
    }

    /** Every core again, for this JVM once the swarm is done (a test's JVM goes on to other tests). */
    static void unpin(long pid) {
        pin(pid, "0-" + (Runtime.getRuntime().availableProcessors() - 1));
    }

    private static void pin(long pid, String core) {
        try {
            Process p = new ProcessBuilder("taskset", "-a", "-p", "-c", core, Long.toString(pid))
                    .redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes());
            if (p.waitFor() != 0) {
                throw new IllegalStateException("taskset -a -p -c " + core + " " + pid + " failed: " + output);
            }
        } catch (IOException e) {
            throw new IllegalStateException("taskset (util-linux) is needed to pin the control plane to its core", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
