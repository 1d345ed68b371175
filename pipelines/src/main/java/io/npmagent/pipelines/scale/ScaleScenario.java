package io.npmagent.pipelines.scale;

import java.time.Duration;

/**
 * A scale scenario through the whole agent: a cluster of {@code pods} (of which {@code localPods} on the
 * measured node) and {@code policies}, present before the agent starts; then, for {@code events}, pods
 * created and deleted at {@code podChurnPerSecond} each and policies edited at
 * {@code policyEditsPerSecond}, while a probe policy flips once a second and packets time each flip.
 * {@code clusterPolicies} ClusterNetworkPolicies may stand beside the NetworkPolicies ({@link ScaleCluster#clusterPolicy}).
 */
public record ScaleScenario(String name, int pods, int localPods, int policies, Duration events, double podChurnPerSecond,
        double policyEditsPerSecond, int clusterPolicies) {

    public ScaleScenario(String name, int pods, int localPods, int policies, Duration events, double podChurnPerSecond, double policyEditsPerSecond) {
        this(name, pods, localPods, policies, events, podChurnPerSecond, policyEditsPerSecond, 0);
    }

    /** The same scenario with {@code n} ClusterNetworkPolicies beside its NetworkPolicies: its results are named {@code NAME+Ncnp}. */
    ScaleScenario withClusterPolicies(int n) {
        return new ScaleScenario(name + "+" + n + "cnp", pods, localPods, policies, events, podChurnPerSecond, policyEditsPerSecond, n);
    }

    static final String NAMES = "npm640, large, churn";

    /** The scenario by name; {@code quick}: a small version of it, for CI. */
    static ScaleScenario of(String name, boolean quick) {
        return switch (name) {
            // NPM's: 640 services of two pods, every pod on this node, one policy per service.
            case "npm640" -> quick ? new ScaleScenario(name, 160, 160, 80, Duration.ofSeconds(5), 0, 5)
                    : new ScaleScenario(name, 1280, 1280, 640, Duration.ofSeconds(30), 0, 5);
            // A large cluster as one node sees it.
            case "large" -> quick ? new ScaleScenario(name, 5_000, 110, 500, Duration.ofSeconds(5), 0, 5)
                    : new ScaleScenario(name, 100_000, 110, 10_000, Duration.ofSeconds(30), 0, 5);
            // Churn: pods come and go at 50/s, policies change at 5/s, for two minutes.
            case "churn" -> quick ? new ScaleScenario(name, 2_000, 110, 200, Duration.ofSeconds(10), 50, 5)
                    : new ScaleScenario(name, 10_000, 110, 1_000, Duration.ofMinutes(2), 50, 5);
            default -> throw new IllegalArgumentException("unknown scenario " + name + " (" + NAMES + ")");
        };
    }

    boolean npm640() {
        return name.equals("npm640");
    }
}
