package io.npmagent.agent.cli;

/** The process exit codes of the CLI, listed in {@code npm-agent --help}. */
public final class ExitCodes {
    public static final int OK = 0;
    /** compile: the manifests or the policies in them have problems; everything was printed anyway. */
    public static final int INPUT_PROBLEMS = 1;
    /** Picocli uses 2 for bad options; so do we for options that name things that do not exist. */
    public static final int USAGE = 2;
    /** explain: the connection is denied. */
    public static final int DENIED = 3;
    /** apply, uninstall: the kernel refused (the harness's sandbox up: the sandbox could not be brought up); flows: the agent could not be reached. */
    public static final int FAILED = 4;
    /** The harness's sandbox probe: the sandbox did not apply its manifests in time. */
    public static final int NOT_CONVERGED = 5;
    /** explain --flow: the kernel's verdict on a recorded flow and the policies' intent disagree. */
    public static final int DISAGREE = 6;

    private ExitCodes() {}
}
