package io.npmagent.dataplane.exec;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * A {@link CommandRunner} that plays a script: each call must be the next expected argv, exactly, and
 * gets the canned answer. Everything sent on stdin is kept for assertions and golden files. A call
 * nobody expected fails the test at once.
 */
public final class ScriptedRunner implements CommandRunner {
    private final Deque<Step> script = new ArrayDeque<>();
    private final List<Call> calls = new ArrayList<>();

    private record Step(List<String> argv, CommandResult answer) {}

    /** A call as it happened. */
    public record Call(List<String> argv, String stdin) {}

    public ScriptedRunner expect(List<String> argv, String stdout) {
        script.add(new Step(argv, new CommandResult(argv, 0, stdout, "")));
        return this;
    }

    public ScriptedRunner expectFailure(List<String> argv, String stderr) {
        script.add(new Step(argv, new CommandResult(argv, 2, "", stderr)));
        return this;
    }

    @Override
    public synchronized CommandResult run(List<String> argv, String stdin, Duration timeout) {
        calls.add(new Call(argv, stdin));
        Step next = script.poll();
        if (next == null) {
            throw new AssertionError("unexpected call " + argv + " with stdin:\n" + stdin);
        }
        if (!next.argv().equals(argv)) {
            throw new AssertionError("expected " + next.argv() + " but was " + argv);
        }
        return next.answer();
    }

    @Override
    public boolean available(String program) {
        return true;
    }

    public synchronized List<Call> calls() {
        return List.copyOf(calls);
    }

    public synchronized boolean finished() {
        return script.isEmpty();
    }
}
