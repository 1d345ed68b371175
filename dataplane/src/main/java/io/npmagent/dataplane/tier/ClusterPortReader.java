package io.npmagent.dataplane.tier;

import io.npmagent.dataplane.model.ClusterNetworkPolicy;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.Protocol;

/**
 * Validates one entry of a ClusterNetworkPolicy rule's {@code protocols} for {@link ClusterPolicyNormalizer}:
 * exactly one of {@code tcp}, {@code udp}, {@code sctp} and {@code destinationNamedPort}, a
 * {@code destinationPort} with exactly one of {@code number} and {@code range}, ports 1-65535, and
 * {@code start < end}. An entry that sets none of the fields this model knows is what an entry of a
 * newer API's protocol kind looks like: an error, so its rule fails closed.
 */
final class ClusterPortReader {
    private ClusterPortReader() {}

    /** The port entry, or null (with its errors added) when it is invalid. */
    static ClusterPort read(ClusterNetworkPolicy.ProtocolMatch match, String at, FieldErrors errors) {
        if (match == null) {
            errors.add(at, "must specify exactly one of tcp, udp, sctp and destinationNamedPort");
            return null;
        }
        String named = match.destinationNamedPort() == null || match.destinationNamedPort().isEmpty()
                ? null : match.destinationNamedPort();
        int set = (match.tcp() != null ? 1 : 0) + (match.udp() != null ? 1 : 0) + (match.sctp() != null ? 1 : 0)
                + (named != null ? 1 : 0);
        if (set == 0) {
            errors.add(at, "sets none of tcp, udp, sctp and destinationNamedPort: a protocol this agent does not know "
                    + "(written for a newer API?) or an empty entry");
            return null;
        }
        if (set > 1) {
            errors.add(at, "must specify exactly one of tcp, udp, sctp and destinationNamedPort");
            return null;
        }
        if (named != null) {
            return new ClusterPort.Named(named);
        }
        if (match.tcp() != null) {
            return transport(match.tcp(), Protocol.TCP, at + ".tcp", errors);
        }
        if (match.udp() != null) {
            return transport(match.udp(), Protocol.UDP, at + ".udp", errors);
        }
        return transport(match.sctp(), Protocol.SCTP, at + ".sctp", errors);
    }

    private static ClusterPort transport(
            ClusterNetworkPolicy.TransportMatch match, Protocol protocol, String at, FieldErrors errors) {
        ClusterNetworkPolicy.Port port = match.destinationPort();
        if (port == null) {
            errors.add(at, "must specify destinationPort");
            return null;
        }
        String portAt = at + ".destinationPort";
        if ((port.number() == null) == (port.range() == null)) {
            errors.add(portAt, "must specify exactly one of number and range");
            return null;
        }
        if (port.number() != null) {
            return portNumber(port.number(), portAt + ".number", errors) ? ClusterPort.Range.single(protocol, port.number()) : null;
        }
        ClusterNetworkPolicy.PortRange range = port.range();
        String rangeAt = portAt + ".range";
        boolean ok = true;
        if (range.start() == null) {
            errors.add(rangeAt + ".start", "required");
            ok = false;
        } else {
            ok &= portNumber(range.start(), rangeAt + ".start", errors);
        }
        if (range.end() == null) {
            errors.add(rangeAt + ".end", "required");
            ok = false;
        } else {
            ok &= portNumber(range.end(), rangeAt + ".end", errors);
        }
        if (ok && range.start() >= range.end()) {
            errors.add(rangeAt, "Start port must be less than End port (" + range.start() + " >= " + range.end() + ")");
            ok = false;
        }
        return ok ? new ClusterPort.Range(protocol, range.start(), range.end()) : null;
    }

    private static boolean portNumber(int port, String at, FieldErrors errors) {
        if (port < 1 || port > 65535) {
            errors.add(at, "port " + port + " must be between 1 and 65535, inclusive");
            return false;
        }
        return true;
    }
}
