package io.npmagent.dataplane.model;

import java.util.Objects;

/** A declared container port; {@code name} is null when the port has none. Named ports resolve to these. */
public record ContainerPort(String name, int port, Protocol protocol) {

    public ContainerPort {
        Objects.requireNonNull(protocol, "protocol");
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("container port " + port + " out of range 1-65535");
        }
    }
}
