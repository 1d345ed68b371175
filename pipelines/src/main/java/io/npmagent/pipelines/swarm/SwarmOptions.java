package io.npmagent.pipelines.swarm;

import java.time.Duration;
import java.util.List;

/**
 * A swarm run's settings, from the command line.
 *
 * @param churnPerSecond pods created and as many deleted a second in churn (10: the 20 pod operations a second of Kubernetes' SLO)
 * @param timed          watchers that time every pod event (the rest only read and count)
 */
record SwarmOptions(int pods, int policies, List<Integer> agents, List<String> profiles, Duration length, double churnPerSecond,
        double burstPerSecond, Duration burstLength, double pauseFraction, Duration pauseLength, int timed, String backend) {
    static final String PROFILES = "idle, churn, pause, burst, storm, rollout";
}
