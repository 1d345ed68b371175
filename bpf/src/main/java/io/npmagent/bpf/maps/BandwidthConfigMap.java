package io.npmagent.bpf.maps;

import java.time.Duration;

/** {@code npm_bw_config} (bandwidth.h): the one entry of the shapers' settings. */
public final class BandwidthConfigMap {
    public static final String NAME = "npm_bw_config";
    public static final int VALUE_SIZE = 24;

    private BandwidthConfigMap() {}

    public static byte[] key() {
        return StateMap.key();
    }

    /** struct npm_bw_config. */
    public static byte[] value(Duration horizon, Duration ecnThreshold, Duration ingressBurst) {
        return Bytes.writer(VALUE_SIZE).putLong(horizon.toNanos()).putLong(ecnThreshold.toNanos()).putLong(ingressBurst.toNanos()).array();
    }
}
