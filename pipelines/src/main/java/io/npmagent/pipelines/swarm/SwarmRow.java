package io.npmagent.pipelines.swarm;

import java.util.List;

/**
 * One profile at one swarm size: what it cost the control plane, what the watchers read, what the timing
 * watchers saw of the load generator's writes, and the real agent's probe flips.
 *
 * @param agents   the real agent plus the others
 * @param fleet    what the others are: agent-shaped {@code watchers}, or real {@code agents} (calibration)
 * @param sync     seconds until every restarted watcher was in sync (NaN where none restarted)
 * @param delivery null where the profile wrote nothing
 * @param flips    the real agent's event → enforced times, in seconds (empty where it did not flip)
 * @param writeAcks the load generator's write latencies, as it saw them
 */
record SwarmRow(int agents, String fleet, int pods, String profile, ControlPlaneReading.Cost cost, SwarmStats.Snapshot swarm, double sync,
        PodWrites.Delivery delivery, List<Double> flips, List<Double> writeAcks, int writeFailures) {}
