package io.npmagent.agent.cli;

import io.npmagent.dataplane.bandwidth.BandwidthSettings;
import io.npmagent.dataplane.bandwidth.FlowControl;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/** {@code --edt-horizon}, {@code --ecn-threshold}, {@code --ingress-burst}, {@code --bbr}, {@code --edt-flow-control}, {@code --big-tcp}: how the eBPF backend holds pods to their rates. */
public final class BandwidthOptions {
    @Option(names = "--edt-horizon", paramLabel = "TIME", converter = DurationText.class,
            description = "Egress: a packet that would depart this far ahead is dropped (default: 1s).")
    Duration horizon = BandwidthSettings.DEFAULTS.horizon();

    @Option(names = "--ecn-threshold", paramLabel = "TIME", converter = DurationText.class,
            description = "Egress: ECN-capable packets departing this far ahead are marked CE (default: 100ms).")
    Duration ecnThreshold = BandwidthSettings.DEFAULTS.ecnThreshold();

    @Option(names = "--ingress-burst", paramLabel = "TIME", converter = DurationText.class,
            description = "Ingress: the policer's depth, as time at the pod's rate (default: 1s).")
    Duration ingressBurst = BandwidthSettings.DEFAULTS.ingressBurst();

    @Option(names = "--bbr", description = "Make BBR the congestion control of pods created from now on, where the kernel keeps "
            + "packets' timestamps across namespaces (5.18 and later) and offers bbr; refused with a reason otherwise.")
    boolean bbr;

    @Option(names = "--big-tcp", description = "Raise pods' veths (both ends) to BIG TCP's 192 KiB GSO/GRO packets: IPv4 on every pod "
            + "(kernel 6.3 and later), IPv6 on bridged pods (a routed node's IPv6 forwarding refuses them); connections made after.")
    boolean bigTcp;

    @Option(names = "--edt-flow-control", paramLabel = "MODE", converter = FlowControlText.class,
            description = "Egress: off (packets only), protect (a TCP flow with fewer than 2 packets in flight is never dropped, and with "
                    + "--cgroup-root pods' TCP connections pace themselves to the pod's queue) or "
                    + "back-pressure (that, and TCP told to slow down and held back at the socket; needs --cgroup-root; "
                    + "pair it with a short horizon, e.g. 200ms, and an ECN threshold of 20ms) (default: protect).")
    FlowControl flowControl = BandwidthSettings.DEFAULTS.flowControl();

    public BandwidthSettings settings() {
        return new BandwidthSettings(horizon, ecnThreshold, ingressBurst, bbr, flowControl, bigTcp);
    }

    static final class FlowControlText implements ITypeConverter<FlowControl> {
        @Override
        public FlowControl convert(String value) {
            try {
                return FlowControl.of(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** {@code 500us}, {@code 10ms}, {@code 1.5s}: a number and a unit. */
    static final class DurationText implements ITypeConverter<Duration> {
        private static final Pattern SYNTAX = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)(ns|us|ms|s)");

        @Override
        public Duration convert(String value) {
            Matcher m = SYNTAX.matcher(value.toLowerCase(Locale.ROOT));
            if (!m.matches()) {
                throw new TypeConversionException("\"" + value + "\" is not a duration such as 500us, 10ms or 1.5s");
            }
            double n = Double.parseDouble(m.group(1));
            double nanos = switch (m.group(2)) {
                case "ns" -> n;
                case "us" -> n * 1e3;
                case "ms" -> n * 1e6;
                default -> n * 1e9;
            };
            return Duration.ofNanos(Math.round(nanos));
        }
    }
}
