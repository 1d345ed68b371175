package io.npmagent.dataplane.desired;

import java.util.Comparator;

/** "Identity {@code identity} is in peer set {@code set}": one member of a selector peer set. */
public record Membership(PeerSetKey set, IdentityId identity) implements Comparable<Membership> {
    private static final Comparator<Membership> ORDER =
            Comparator.comparing(Membership::set).thenComparing(Membership::identity);

    @Override
    public int compareTo(Membership o) {
        return ORDER.compare(this, o);
    }
}
