package io.npmagent.dataplane.exec;

import java.time.Duration;
import java.util.List;

/**
 * Runs one kernel tool. The only way this module starts a process: argv is passed as a list, never
 * through a shell, and object text only ever reaches a process as restore input on stdin.
 */
public interface CommandRunner {

    /**
     * Runs {@code argv} with {@code stdin} (may be empty) and waits at most {@code timeout}; a process
     * that outlives it is killed and reported as failed.
     */
    CommandResult run(List<String> argv, String stdin, Duration timeout);

    /** Whether {@code program} can be run (found on the PATH, or an absolute path that exists). */
    boolean available(String program);

    /** The network namespace ({@code ip netns} name) commands run in; null for the caller's own. */
    default String netns() {
        return null;
    }
}
