package io.npmagent.pipelines.swarm;

import java.time.Duration;
import java.util.List;

/**
 * The agents beside the measured one, as a profile drives them: agent-shaped watchers ({@link Swarm}),
 * or, to calibrate those, real agents ({@link RealAgents}).
 */
interface Fleet extends AutoCloseable {
    int size();

    /** Starts every member at once and returns when all are in sync. */
    Duration startAll(Duration limit) throws Exception;

    /** Every member restarting at once; returns when all are in sync again. */
    Duration restartAll(Duration limit) throws Exception;

    /** Restarts {@code fraction} of the members at a time, each batch once the last is in sync; returns the whole rollout's time. */
    Duration rollout(double fraction, Duration limit) throws Exception;

    /** Stops {@code fraction} of the members reading for {@code pause}, as a long GC pause would. */
    void pause(double fraction, Duration pause) throws Exception;

    /** The members that time every pod event (none among real agents). */
    List<DeliveryLog> timingLogs();

    /** What the members read so far (zeros where they do not count). */
    SwarmStats.Snapshot read();

    @Override
    void close();
}
