package io.npmagent.pipelines.swarm;

import java.io.IOException;

/**
 * Which cores do what: kube-apiserver and etcd on core 0, everything else (this JVM and what it starts:
 * the swarm, the load generator, the real agent, the controller manager) on core 1, so the control
 * plane's cost shows on its own and the swarm's own work cannot hide in it. {@code taskset -a}: every
 * thread now, and the threads they start inherit it.
 */
final class CpuPinning {
    private CpuPinning() {}

    static boolean possible() {
        return Runtime.getRuntime().availableProcessors() >= 2;
    }

    static void pin(long pid, int core) {
        pin(pid, Integer.toString(core));
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
