package io.npmagent.pipelines.upstream;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How upstream's suites are run: their binaries' command lines, what each runs of itself (its focus,
 * its exclusions) and the short form CI runs. Each is run as upstream ships it; what is left out is left
 * out for SCTP alone, which this kernel has no sockets for.
 */
final class SuiteCommands {
    /** The two specs of a pod network on several nodes, which the short form runs too. */
    static final String E2E_MULTI_NODE = "\\[sig-network\\] NoSNAT|should preserve source pod IP for traffic thru service cluster IP";
    /**
     * e2e: upstream's focus for NetworkPolicy implementations, and the two specs of a pod network on several
     * nodes an agent must not break (no SNAT between pods; a pod's source address kept through a ClusterIP).
     */
    static final String E2E_FOCUS = "\\[sig-network\\] Netpol|\\[Feature:NetworkPolicy\\]|" + E2E_MULTI_NODE;
    static final String E2E_SKIP = "\\[Feature:SCTPConnectivity\\]";
    /** The short form's Netpol specs: default deny on TCP and UDP, an egress named port, an ipBlock except, an updated policy. */
    static final List<String> E2E_SHORT = List.of("should support a 'default-deny-ingress' policy", "should allow egress access on one named port",
            "should enforce except clause while egress access to server in CIDR block", "should enforce updated policy");
    /** cyclonus: its default excluded tags, plus sctp. */
    static final String CYCLONUS_EXCLUDE = "multi-peer,upstream-e2e,example,end-port,namespaces-by-default-label,sctp";
    /** The short form's cases by tag: a namespace relabelled under policy and back, a pod created and deleted under policy. */
    static final String CYCLONUS_SHORT = "set-namespace-labels,create-pod";
    /** The image cyclonus names for its servers; the nodes carry agnhost 2.56 under that name too (the same subcommands and flags). */
    static final String CYCLONUS_AGNHOST = "registry.k8s.io/e2e-test-images/agnhost:2.43";

    /**
     * network-policy-api's conformance suite: its profile run (the form whose report a project submits), the profile
     * ClusterNetworkPolicy with the two Experimental features the agent implements (named ports, egress nodes peers).
     */
    static final String CNP_PROFILE = "ClusterNetworkPolicy";
    static final String CNP_FEATURES = "ClusterNetworkPolicyNamedPorts,ClusterNetworkPolicyEgressNodePeers";
    /** The image the suite's base manifests name; the nodes carry agnhost 2.56 under that name too (as for cyclonus). */
    static final String CNP_AGNHOST = "registry.k8s.io/e2e-test-images/agnhost:2.45";
    /**
     * The short form's tests, none of which probes SCTP: an Admin tier egress rule on TCP, a Baseline tier ingress rule
     * on UDP, the Admin tier's priorities, and both tiers with a NetworkPolicy between them.
     */
    static final List<String> CNP_SHORT = List.of("CNPAdminTierEgressTCP", "CNPBaselineTierIngressUDP", "CNPAdminTierPriorityField",
            "CNPAdminTierIntegration");

    private SuiteCommands() {}

    /**
     * {@code cnp-conformance.test} (the suite's module compiled by {@code go test -c}, unmodified): the profile test,
     * verbose, its report to {@code report}; the short form selects {@link #CNP_SHORT} by Go's own {@code -test.run}
     * (the suite has no flag of its own for it). KUBECONFIG names the cluster.
     */
    static List<String> cnp(Path binary, Path report, boolean shortForm) {
        String run = "^TestConformanceProfiles$";
        if (shortForm) {
            run += "/^(" + String.join("|", CNP_SHORT) + ")$";
        }
        return List.of(binary.toString(), "-test.v", "-test.timeout=60m", "-test.run", run, "-conformance-profiles=" + CNP_PROFILE,
                "-supported-features=" + CNP_FEATURES, "-organization", "npm-agent", "-project", "npm-agent", "-url", "https://example.invalid",
                "-version", "0.1.0", "-contact", "none", "-additional-info", "none", "-report-output=" + report.toAbsolutePath());
    }

    /** e2e.test against the cluster of {@code kubeconfig}, its JUnit report to {@code junit}; upstream's flags and retries unchanged. */
    static List<String> e2e(Path e2eTest, Path kubeconfig, Path junit, boolean shortForm) {
        String focus = E2E_FOCUS;
        if (shortForm) {
            focus = "\\[sig-network\\] Netpol.*(" + String.join("|", E2E_SHORT.stream().map(SuiteCommands::regexQuote).toList()) + ")|"
                    + E2E_MULTI_NODE;
        }
        return List.of(e2eTest.toString(), "--kubeconfig=" + kubeconfig, "--provider=skeleton", "--ginkgo.focus=" + focus,
                "--ginkgo.skip=" + E2E_SKIP, "--ginkgo.v", "--ginkgo.no-color", "--ginkgo.junit-report=" + junit, "--ginkgo.timeout=12h");
    }

    /**
     * {@code cyclonus generate} with its defaults, except: servers on TCP and UDP only, the sctp cases excluded;
     * {@code --noisy}, so every try's table is in the log (a step that passed only on cyclonus' retry still
     * shows what its first try got wrong); {@code --job-timeout-seconds 2} instead of 10 (upstream's e2e
     * probes with 1 s): each blocked probe waits out the whole timeout, most of a run's time at 10 s, while an
     * allowed connection answers in milliseconds, so what reads as blocked is what got no answer in 2 s (two
     * SYNs, a second apart).
     */
    static List<String> cyclonus(Path cyclonus, Path junit, boolean shortForm) {
        List<String> argv = new ArrayList<>(List.of(cyclonus.toString(), "generate", "--server-protocol=TCP,UDP", "--exclude=" + CYCLONUS_EXCLUDE));
        if (shortForm) {
            argv.add("--include=" + CYCLONUS_SHORT);
        }
        argv.addAll(List.of("--job-timeout-seconds=2", "--junit-results-file=" + junit, "--cleanup-namespaces", "--noisy"));
        return argv;
    }

    /** cyclonus listing, without a cluster, the cases the sctp exclusion leaves out (so the report names each skip). */
    static List<String> cyclonusSctpCases(Path cyclonus) {
        return List.of(cyclonus.toString(), "generate", "--mock", "--dry-run",
                "--exclude=" + CYCLONUS_EXCLUDE.substring(0, CYCLONUS_EXCLUDE.lastIndexOf(",sctp")), "--include=sctp");
    }

    /** {@code text} as a literal in a Go regular expression (ginkgo's focus). */
    static String regexQuote(String text) {
        StringBuilder sb = new StringBuilder();
        for (char ch : text.toCharArray()) {
            if ("[]\\.*^$(){}+?|/".indexOf(ch) >= 0) {
                sb.append('\\');
            }
            sb.append(ch);
        }
        return sb.toString();
    }
}
