package io.npmagent.agent.run;

import java.time.Duration;

/** A model thread feeding the agent from a source (the API server, a manifest directory), run until stopped. */
public interface ModelLoop {
    /** Runs on the calling thread until {@link #stop}, then closes the agent (its queue flushes what is due). */
    void run(Duration poll);

    /**
     * Asks the loop to stop and waits (at most {@code wait}) until it has, for a shutdown hook: the JVM
     * must not exit halfway through a kernel write. The caller must not be the loop's own thread.
     */
    void stop(Duration wait);

    /** The status as of the last step, null before the first: safe from any thread. */
    AgentStatus latest();

    /** Stops the loop from a shutdown signal (SIGTERM, SIGINT), giving the batch in flight {@code wait} to land. */
    default void stopOnShutdown(Duration wait) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(wait), "npm-agent-stop"));
    }
}
