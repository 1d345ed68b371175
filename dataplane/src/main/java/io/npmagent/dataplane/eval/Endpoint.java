package io.npmagent.dataplane.eval;

import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import java.util.Objects;

/**
 * One end of a connection: a pod at one of its addresses, or an address outside the pod network.
 * Either way the evaluator judges it by its address, as a packet is judged: a pod endpoint whose
 * address another pod owns is that other pod, and an "external" address a pod owns is that pod.
 */
public sealed interface Endpoint {

    IpAddress ip();

    static Endpoint pod(PodKey pod, IpAddress ip) {
        return new PodEndpoint(pod, ip);
    }

    static Endpoint external(IpAddress ip) {
        return new ExternalEndpoint(ip);
    }

    static Endpoint external(String ip) {
        return new ExternalEndpoint(IpAddress.parse(ip));
    }

    record PodEndpoint(PodKey pod, IpAddress ip) implements Endpoint {
        public PodEndpoint {
            Objects.requireNonNull(pod, "pod");
            Objects.requireNonNull(ip, "ip");
        }

        @Override
        public String toString() {
            return pod + "@" + ip;
        }
    }

    record ExternalEndpoint(IpAddress ip) implements Endpoint {
        public ExternalEndpoint {
            Objects.requireNonNull(ip, "ip");
        }

        @Override
        public String toString() {
            return ip.toString();
        }
    }
}
