package io.npmagent.dataplane.policy;

import io.npmagent.dataplane.desired.Identity;
import io.npmagent.dataplane.desired.IdentityId;
import io.npmagent.dataplane.desired.PeerSetKey.SelectorPeers;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Narrows the selector matching the compiler does on every new identity and every new set. A set of
 * pods in one namespace (a {@code podSelector}-only peer, the common case) can only hold identities of
 * that namespace, so it is filed under it; only sets with a {@code namespaceSelector} are checked
 * against identities of every namespace; and identities are filed by their pod labels too
 * ({@link LabelIndex}), so a set is asked only about identities carrying its rarest required label.
 * Membership itself is still decided by
 * {@link SelectorPeers#matches}: this only says which pairs are worth asking about.
 */
final class SelectorIndex {
    private final Map<String, Set<SelectorPeers>> setsInNamespace = new HashMap<>();
    private final Set<SelectorPeers> setsAcrossNamespaces = new HashSet<>();
    private final LabelIndex<IdentityId> identities = new LabelIndex<>();

    void addSet(SelectorPeers set) {
        if (set.namespace() != null) {
            setsInNamespace.computeIfAbsent(set.namespace(), k -> new HashSet<>()).add(set);
        } else {
            setsAcrossNamespaces.add(set);
        }
    }

    void removeSet(SelectorPeers set) {
        if (set.namespace() == null) {
            setsAcrossNamespaces.remove(set);
            return;
        }
        Set<SelectorPeers> sets = setsInNamespace.get(set.namespace());
        if (sets != null && sets.remove(set) && sets.isEmpty()) {
            setsInNamespace.remove(set.namespace());
        }
    }

    void addIdentity(Identity identity, IdentityId id) {
        identities.add(identity.namespace(), identity.podLabels(), id);
    }

    void removeIdentity(Identity identity, IdentityId id) {
        identities.remove(identity.namespace(), identity.podLabels(), id);
    }

    /** The sets an identity of {@code namespace} could be a member of. */
    List<SelectorPeers> setsFor(String namespace) {
        return Stream.concat(
                        setsInNamespace.getOrDefault(namespace, Set.of()).stream(),
                        setsAcrossNamespaces.stream())
                .toList();
    }

    /** The identities that could be members of {@code set}. */
    Set<IdentityId> identitiesFor(SelectorPeers set) {
        return identities.candidates(set.namespace(), set.podSelector());
    }
}
