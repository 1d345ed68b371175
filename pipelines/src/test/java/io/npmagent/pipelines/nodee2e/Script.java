package io.npmagent.pipelines.nodee2e;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.function.Executable;

/**
 * A scenario as the checks an operator would make, in order: actions (apply a policy, edit the
 * ConfigMap) between checks, each check a {@link DynamicTest}. The stream is lazy: an action runs when
 * JUnit reaches it, after the checks before it ran, and a check's name may say what an action found.
 */
final class Script {
    /** Something that may throw, as a check or an action does. */
    interface Action {
        void run() throws Throwable;
    }

    private final List<Supplier<Stream<DynamicNode>>> items = new ArrayList<>();

    Script act(Action action) {
        items.add(() -> {
            try {
                action.run();
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
            return Stream.empty();
        });
        return this;
    }

    Script check(String name, Executable check) {
        return check(() -> name, check);
    }

    /** A check whose name is made when it is reached (it reports what the actions before it saw). */
    Script check(Supplier<String> name, Executable check) {
        items.add(() -> Stream.of(DynamicTest.dynamicTest(name.get(), check)));
        return this;
    }

    Script then(Script more) {
        items.addAll(more.items);
        return this;
    }

    Stream<DynamicNode> stream() {
        return items.stream().flatMap(Supplier::get);
    }
}
