package io.npmagent.dataplane.desired;

import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Selector;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;

/**
 * A set of peers a rule admits, named by what defines it, so every rule that says the same thing
 * shares one set (one ipset, one nft set, one group of identities). The key is the whole definition:
 * two keys are equal exactly when the sets are defined alike.
 */
public sealed interface PeerSetKey extends Comparable<PeerSetKey> {

    /**
     * Unambiguous text of the definition, the input to the hashed names backends give their sets.
     * Backends must still check their names for collisions.
     */
    String canonical();

    /** For people (flow verdicts' nearest rule): {@code pods {app=api} in namespace shop}, {@code ipBlock 10.0.0.0/8 except 10.1.0.0/16}. */
    String describe();

    @Override
    default int compareTo(PeerSetKey o) {
        return canonical().compareTo(o.canonical());
    }

    /**
     * Pods chosen by labels: {@code podSelector} within one namespace ({@code namespace} set, the
     * policy's own), or within every namespace {@code namespaceSelector} matches ({@code namespace} null).
     * Membership is by identity: a pod is in the set when its identity is.
     *
     * <p>A class, not a record, so that it keeps its canonical text: keys are compared and hashed all
     * the time (sorted deltas, set rows), and building the text anew for each comparison was the
     * compiler's hottest spot.
     */
    final class SelectorPeers implements PeerSetKey {
        private final String namespace;
        private final Selector namespaceSelector;
        private final Selector podSelector;
        private final String canonical;

        public SelectorPeers(String namespace, Selector namespaceSelector, Selector podSelector) {
            Objects.requireNonNull(podSelector, "podSelector");
            if ((namespace == null) == (namespaceSelector == null)) {
                throw new IllegalArgumentException("exactly one of namespace and namespaceSelector");
            }
            this.namespace = namespace;
            this.namespaceSelector = namespaceSelector;
            this.podSelector = podSelector;
            this.canonical = namespace != null
                    ? "pods:ns=" + namespace.length() + ":" + namespace + ";pods=" + podSelector
                    : "pods:nsSelector=" + namespaceSelector + ";pods=" + podSelector;
        }

        public static SelectorPeers inNamespace(String namespace, Selector podSelector) {
            return new SelectorPeers(namespace, null, podSelector);
        }

        public static SelectorPeers acrossNamespaces(Selector namespaceSelector, Selector podSelector) {
            return new SelectorPeers(null, namespaceSelector, podSelector);
        }

        public String namespace() {
            return namespace;
        }

        public Selector namespaceSelector() {
            return namespaceSelector;
        }

        public Selector podSelector() {
            return podSelector;
        }

        public boolean matches(Identity identity) {
            boolean namespaceMatches = namespace != null
                    ? namespace.equals(identity.namespace())
                    : namespaceSelector.matches(identity.namespaceLabels());
            return namespaceMatches && podSelector.matches(identity.podLabels());
        }

        @Override
        public String canonical() {
            return canonical;
        }

        @Override
        public String describe() {
            return "pods " + podSelector + (namespace != null ? " in namespace " + namespace : " in namespaces " + namespaceSelector);
        }

        /** The canonical text is unambiguous, so equal texts are equal definitions. */
        @Override
        public boolean equals(Object o) {
            return o instanceof SelectorPeers other && canonical.equals(other.canonical);
        }

        @Override
        public int hashCode() {
            return canonical.hashCode();
        }

        @Override
        public String toString() {
            return canonical;
        }
    }

    /**
     * Addresses in {@code cidr} but in none of {@code except} (an ipBlock). Matches by address, so it
     * admits pod addresses too; {@code except} is sorted and holds only strict subsets of {@code cidr}.
     */
    record CidrPeers(Cidr cidr, List<Cidr> except) implements PeerSetKey {
        public CidrPeers {
            Objects.requireNonNull(cidr, "cidr");
            TreeSet<Cidr> sorted = new TreeSet<>(except);
            for (Cidr e : sorted) {
                if (!cidr.contains(e) || e.prefixLength() == cidr.prefixLength()) {
                    throw new IllegalArgumentException(e + " is not a strict subset of " + cidr);
                }
            }
            except = List.copyOf(new ArrayList<>(sorted));
        }

        public boolean contains(IpAddress ip) {
            if (!cidr.contains(ip)) {
                return false;
            }
            for (Cidr e : except) {
                if (e.contains(ip)) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public String canonical() {
            StringBuilder sb = new StringBuilder("cidr:").append(cidr);
            if (!except.isEmpty()) {
                sb.append(";except=");
                for (int i = 0; i < except.size(); i++) {
                    sb.append(i == 0 ? "" : ",").append(except.get(i));
                }
            }
            return sb.toString();
        }

        @Override
        public String describe() {
            return "ipBlock " + cidr + (except.isEmpty() ? "" : " except " + except.stream().map(Cidr::toString).collect(java.util.stream.Collectors.joining(", ")));
        }

        @Override
        public String toString() {
            return canonical();
        }
    }
}
