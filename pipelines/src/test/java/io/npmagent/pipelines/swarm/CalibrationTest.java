package io.npmagent.pipelines.swarm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** A profile's own API CPU: what the API server would not have spent anyway over as long. */
class CalibrationTest {
    @Test
    void aLongerProfileIsChargedTheIdleRateAndNotTheCollectorsIdleMarking() {
        // Idle: 30 s at 0.02 cores, of which 0.005 idle-time marking: 0.45 compulsory CPU seconds, 0.015 cores.
        ControlPlaneReading.Cost idle = cost(30, 0.02, 0.005);
        // A start of 120 s at 0.07 cores, 0.01 of them idle-time marking: 7.2 compulsory, 1.8 of it the idle rate.
        ControlPlaneReading.Cost slowStart = cost(120, 0.07, 0.01);
        // The same work done in 6 s with no idle time: 5.4 CPU seconds, 0.09 of it the idle rate.
        ControlPlaneReading.Cost fastStart = cost(6, 0.9, 0);

        assertThat(slowStart.compulsoryApiCpu()).isCloseTo(7.2, within(1e-9));
        assertThat(Calibration.ownCpu(slowStart, idle)).isCloseTo(5.4, within(1e-9));
        assertThat(Calibration.ownCpu(fastStart, idle)).isCloseTo(5.31, within(1e-9));
    }

    private static ControlPlaneReading.Cost cost(double seconds, double apiCores, double idleGcCores) {
        return new ControlPlaneReading.Cost(seconds, apiCores, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, idleGcCores, 0, 0);
    }
}
