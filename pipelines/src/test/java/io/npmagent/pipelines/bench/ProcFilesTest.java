package io.npmagent.pipelines.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import org.junit.jupiter.api.Test;

class ProcFilesTest {

    @Test
    void aCoresTicksGrowAndItsBusyTimeIsPartOfThem() throws Exception {
        ProcFiles.CoreTicks before = ProcFiles.coreTicks(0);
        long end = System.nanoTime() + 300_000_000L;
        while (System.nanoTime() < end) {
            Thread.onSpinWait(); // some time passes on every core, busy or idle
        }
        ProcFiles.CoreTicks after = ProcFiles.coreTicks(0);
        assertThat(before.busy()).isBetween(0L, before.all());
        assertThat(after.busy()).isBetween(before.busy(), after.all());
        // A core's fields, busy and idle together, follow the wall clock: 300 ms is 30 ticks at USER_HZ 100.
        assertThat(after.all() - before.all()).isGreaterThanOrEqualTo(15);
    }

    @Test
    void aCoreTheMachineDoesNotHaveIsAnError() {
        assertThatThrownBy(() -> ProcFiles.coreTicks(100_000)).isInstanceOf(IOException.class).hasMessageContaining("cpu100000");
    }
}
