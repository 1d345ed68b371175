package io.npmagent.dataplane.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class QueueConfigTest {
    @Test
    void missingKeysKeepNpmsDefaults() {
        assertThat(QueueConfig.fromSettings(Map.of())).isEqualTo(new QueueConfig(true, true, 100, Duration.ofMillis(500)));
    }

    @Test
    void readsNpmsKeysIncludingItsMisspelling() {
        QueueConfig c = QueueConfig.fromSettings(Map.of(
                "NetPolInBackground", false, "MaxPendingNetPols", 50, "NetPolInvervalInMilliseconds", 250));
        assertThat(c).isEqualTo(new QueueConfig(false, true, 50, Duration.ofMillis(250)));
        assertThat(QueueConfig.fromSettings(Map.of("NetPolIntervalInMilliseconds", "1000", "NetPolInBackground", "true")))
                .isEqualTo(new QueueConfig(true, true, 100, Duration.ofSeconds(1)));
    }

    @Test
    void badValuesNameTheKey() {
        assertThatThrownBy(() -> QueueConfig.fromSettings(Map.of("MaxPendingNetPols", 0)))
                .hasMessage("MaxPendingNetPols: 0 is outside 1 to 2147483647");
        assertThat(QueueConfig.fromSettings(Map.of("NetPolAdaptiveBatching", false))).isEqualTo(QueueConfig.FIXED_INTERVAL);
        assertThatThrownBy(() -> QueueConfig.fromSettings(Map.of("NetPolAdaptiveBatching", "sometimes")))
                .hasMessage("NetPolAdaptiveBatching: expected true or false, not \"sometimes\"");
        assertThatThrownBy(() -> QueueConfig.fromSettings(Map.of("NetPolInBackground", "yes")))
                .hasMessage("NetPolInBackground: expected true or false, not \"yes\"");
        assertThatThrownBy(() -> QueueConfig.fromSettings(Map.of("NetPolIntervalInMilliseconds", 1.5)))
                .hasMessageStartingWith("NetPolIntervalInMilliseconds: expected a whole number");
        assertThatThrownBy(() -> QueueConfig.fromSettings(Map.of("NetPolIntervalInMilliseconds", 100, "NetPolInvervalInMilliseconds", 200)))
                .hasMessageContaining("disagree");
    }
}
