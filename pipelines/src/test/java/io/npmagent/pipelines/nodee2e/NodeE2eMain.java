package io.npmagent.pipelines.nodee2e;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TagFilter;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * {@code pipelines/node-e2e [--nodes N] [--pod-network host-gw|vxlan] [--backend B]... [--newcomers N] [--monitoring] [--alerts] [--helm] [--keep]}: runs {@link NodeE2eTest} (the {@code node-e2e}
 * tag) on the JUnit Platform in this JVM, printing each check as it ends ({@code PASS name} or
 * {@code FAIL name: why}) and, last and alone on its line, {@code N passed, M failed}; exit 1 if any failed.
 */
public final class NodeE2eMain {
    private NodeE2eMain() {}

    public static void main(String[] args) {
        List<String> backends = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--backend" -> {
                    if (i + 1 >= args.length) {
                        usage("--backend needs a backend (" + String.join(", ", NodeE2eTest.ALL) + ")");
                    }
                    backends.add(args[++i]);
                }
                case "--nodes" -> {
                    if (i + 1 >= args.length || !args[i + 1].matches("[1-4]")) {
                        usage("--nodes needs 1 to 4");
                    }
                    System.setProperty(NodeE2eTest.NODES_PROPERTY, args[++i]);
                }
                case "--pod-network" -> {
                    if (i + 1 >= args.length) {
                        usage("--pod-network needs host-gw or vxlan");
                    }
                    System.setProperty(NodeE2eTest.NETWORK_PROPERTY, args[++i]);
                }
                case "--newcomers" -> {
                    if (i + 1 >= args.length || !args[i + 1].matches("[1-9][0-9]*")) {
                        usage("--newcomers needs a number of pods");
                    }
                    System.setProperty(NodeE2eTest.NEWCOMERS_PROPERTY, args[++i]);
                }
                case "--keep" -> System.setProperty(NodeE2eTest.KEEP, "true");
                case "--monitoring" -> System.setProperty(NodeE2eTest.MONITORING, "true");
                case "--alerts" -> System.setProperty(NodeE2eTest.ALERTS, "true");
                case "--helm" -> System.setProperty(NodeE2eTest.HELM, "true");
                default -> usage("unknown option " + args[i]);
            }
        }
        System.setProperty(NodeE2eTest.BACKENDS, String.join(",", backends));
        Instant start = Instant.now();
        Checks checks = new Checks();
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(DiscoverySelectors.selectClass(NodeE2eTest.class))
                .filters(TagFilter.includeTags("node-e2e"))
                .build();
        Launcher launcher = LauncherFactory.create();
        launcher.execute(request, checks);
        NodeE2eTest.say(Duration.between(start, Instant.now()).toSeconds() + " s");
        for (String f : checks.failures) {
            System.out.println("node-e2e: failed: " + f);
        }
        System.out.println(checks.passed + " passed, " + checks.failures.size() + " failed");
        System.exit(checks.failures.isEmpty() && checks.passed > 0 ? 0 : 1);
    }

    private static void usage(String message) {
        System.err.println("node-e2e: " + message + " (node-e2e [--nodes N] [--pod-network host-gw|vxlan] [--backend B]... [--newcomers N] [--monitoring] [--alerts] [--helm] [--keep])");
        System.exit(2);
    }

    /** Counts and prints checks (tests); a container that fails (the cluster did not come up) counts as a failed check. */
    static final class Checks implements TestExecutionListener {
        int passed;
        final List<String> failures = new ArrayList<>();

        @Override
        public void executionFinished(TestIdentifier id, TestExecutionResult result) {
            String name = id.getDisplayName();
            if (result.getStatus() == TestExecutionResult.Status.SUCCESSFUL) {
                if (id.isTest()) {
                    passed++;
                    System.out.println("  PASS " + name);
                }
                return;
            }
            String why = result.getThrowable().map(t -> String.valueOf(t.getMessage()).lines().limit(3).reduce((a, b) -> a + " " + b).orElse(""))
                    .orElse(result.getStatus().toString());
            failures.add(name);
            System.out.println("  FAIL " + name + ": " + why);
        }
    }
}
