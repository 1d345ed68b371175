package io.npmagent.bpf.maps;

import io.npmagent.dataplane.bandwidth.BandwidthSettings;
import io.npmagent.dataplane.bandwidth.FlowControl;

/** {@code npm_bw_config} (bandwidth.h): the one entry of the shapers' settings. */
public final class BandwidthConfigMap {
    public static final String NAME = "npm_bw_config";
    public static final int VALUE_SIZE = 32;

    private BandwidthConfigMap() {}

    public static byte[] key() {
        return StateMap.key();
    }

    /** struct npm_bw_config. */
    public static byte[] value(BandwidthSettings s) {
        return Bytes.writer(VALUE_SIZE).putLong(s.horizon().toNanos()).putLong(s.ecnThreshold().toNanos()).putLong(s.ingressBurst().toNanos())
                .putInt(flow(s.flowControl())).putInt(0).array();
    }

    /** NPM_FLOW_*. */
    private static int flow(FlowControl f) {
        return switch (f) {
            case OFF -> 0;
            case PROTECT -> 1;
            case BACK_PRESSURE -> 2;
        };
    }
}
