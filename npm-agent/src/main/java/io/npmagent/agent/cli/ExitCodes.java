package io.npmagent.agent.cli;

/** The process exit codes of the CLI, listed in {@code npm-agent --help}. */
final class ExitCodes {
    static final int OK = 0;
    /** compile: the manifests or the policies in them have problems; everything was printed anyway. */
    static final int INPUT_PROBLEMS = 1;
    /** Picocli uses 2 for bad options; so do we for options that name things that do not exist. */
    static final int USAGE = 2;
    /** explain: the connection is denied. */
    static final int DENIED = 3;
    /** apply, uninstall: the kernel refused; sandbox up: the sandbox could not be brought up. */
    static final int FAILED = 4;
    /** sandbox probe: the sandbox did not apply its manifests in time. */
    static final int NOT_CONVERGED = 5;

    private ExitCodes() {}
}
