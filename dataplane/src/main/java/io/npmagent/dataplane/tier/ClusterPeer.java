package io.npmagent.dataplane.tier;

import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.Selector;
import java.util.Objects;

/**
 * One validated peer of a ClusterNetworkPolicy rule: the other end of the connection (the source of
 * ingress, the destination of egress). Which ends each kind matches is the evaluator's (and the
 * compiler's) to decide; the kinds are:
 */
public sealed interface ClusterPeer {

    /**
     * Pods on the pod network by labels: {@code pods} (both selectors) or {@code namespaces}
     * ({@code podSelector} {@link Selector#ALL}). Host-network pods are never such peers: their traffic
     * carries the node's address and is judged by it ({@link Network}, {@link Nodes}).
     */
    record Pods(Selector namespaceSelector, Selector podSelector) implements ClusterPeer {
        public Pods {
            Objects.requireNonNull(namespaceSelector, "namespaceSelector");
            Objects.requireNonNull(podSelector, "podSelector");
        }

        @Override
        public String toString() {
            return "pods " + podSelector + " in namespaces " + namespaceSelector;
        }
    }

    /**
     * One CIDR of a {@code networks} peer (egress only). It matches by address, so pod addresses too:
     * the API says Accept or Deny to {@code 0.0.0.0/0} covers pod-to-pod traffic as well.
     */
    record Network(Cidr cidr) implements ClusterPeer {
        public Network {
            Objects.requireNonNull(cidr, "cidr");
        }

        @Override
        public String toString() {
            return "network " + cidr;
        }
    }

    /** The addresses of the nodes whose labels {@code nodeSelector} matches (egress only, experimental). */
    record Nodes(Selector nodeSelector) implements ClusterPeer {
        public Nodes {
            Objects.requireNonNull(nodeSelector, "nodeSelector");
        }

        @Override
        public String toString() {
            return "nodes " + nodeSelector;
        }
    }
}
