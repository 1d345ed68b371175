package io.npmagent.dataplane.kernel;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * A test whose assertions hold a rate or a time (a 50M limit within 5%, a 100 ms premise): it runs alone, after
 * the module's other tests, which run two JVMs side by side (the parent pom's surefire executions), so that no
 * neighbour's CPU is in its figures.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag(Measures.TAG)
public @interface Measures {
    String TAG = "measures";
}
