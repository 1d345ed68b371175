package io.npmagent.dataplane.tier;

import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.Protocol;
import java.util.Objects;

/** One validated entry of a ClusterNetworkPolicy rule's {@code protocols}. */
public sealed interface ClusterPort {

    /**
     * {@code tcp}, {@code udp} or {@code sctp} with a {@code destinationPort}: ports {@code first} to
     * {@code last} inclusive, a single {@code number} being {@code first == last}.
     */
    record Range(Protocol protocol, int first, int last) implements ClusterPort {
        public Range {
            Objects.requireNonNull(protocol, "protocol");
            if (first < 1 || last > 65535 || first > last) {
                throw new IllegalArgumentException("bad port range " + first + "-" + last);
            }
        }

        public static Range single(Protocol protocol, int port) {
            return new Range(protocol, port, port);
        }

        @Override
        public String toString() {
            return protocol + "/" + (first == last ? Integer.toString(first) : first + "-" + last);
        }
    }

    /**
     * {@code destinationNamedPort} (experimental): a container port name, resolved on the destination
     * pod, with whatever protocol that container port declares. A destination that is no pod, or has no
     * port of that name for the connection's protocol, does not match.
     */
    record Named(String name) implements ClusterPort {
        public Named {
            Objects.requireNonNull(name, "name");
        }

        @Override
        public String toString() {
            return "named " + ApiSyntax.quote(name);
        }
    }
}
