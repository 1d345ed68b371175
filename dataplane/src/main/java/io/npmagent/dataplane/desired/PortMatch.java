package io.npmagent.dataplane.desired;

import io.npmagent.dataplane.model.Protocol;
import java.util.Objects;

/** What a rule's port entry admits: a numeric range of one protocol, or a named port. */
public sealed interface PortMatch {

    Protocol protocol();

    /**
     * Ports {@code first} to {@code last} inclusive. A single port has {@code first == last}; a port
     * entry with only a protocol is the whole range 0-65535.
     */
    record PortRange(Protocol protocol, int first, int last) implements PortMatch {
        public PortRange {
            Objects.requireNonNull(protocol, "protocol");
            if (first < 0 || last > 65535 || first > last) {
                throw new IllegalArgumentException("bad port range " + first + "-" + last);
            }
        }

        public static PortRange all(Protocol protocol) {
            return new PortRange(protocol, 0, 65535);
        }

        public static PortRange single(Protocol protocol, int port) {
            return new PortRange(protocol, port, port);
        }

        public boolean matches(Protocol p, int port) {
            return p == protocol && port >= first && port <= last;
        }

        @Override
        public String toString() {
            if (first == 0 && last == 65535) {
                return protocol + "/*";
            }
            return protocol + "/" + (first == last ? Integer.toString(first) : first + "-" + last);
        }
    }

    /**
     * A container port name with its protocol. It always resolves on the pod that serves the
     * connection, the destination: for ingress the target pod, for egress the peer. The port number
     * comes from the destination's {@link Identity#namedPorts()}; a destination that is not a pod, or
     * lacks the name for this protocol, does not match.
     */
    record NamedPort(Protocol protocol, String name) implements PortMatch {
        public NamedPort {
            Objects.requireNonNull(protocol, "protocol");
            Objects.requireNonNull(name, "name");
        }

        @Override
        public String toString() {
            return protocol + "/" + name;
        }
    }
}
