package io.npmagent.dataplane.policy;

import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.PodKey;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * Which pods claim each address; the first by key owns it (two live pods with one address is a fault
 * that must still resolve the same way on every node). Nearly every address has one claimant, so that
 * one is held as its key alone, and only a contested address gets a sorted set: at 100,000 pods a set
 * per address cost 10 MB.
 */
final class AddressClaims {
    /** A {@link PodKey}, or a {@code TreeSet<PodKey>} of two or more. */
    private final Map<IpAddress, Object> claimants = new HashMap<>();

    /** The pod that owns {@code ip}, or null if no pod claims it. */
    PodKey owner(IpAddress ip) {
        Object c = claimants.get(ip);
        return c == null ? null : c instanceof PodKey k ? k : first(c);
    }

    boolean claimed(IpAddress ip) {
        return claimants.containsKey(ip);
    }

    /** Adds {@code pod}'s claim; returns the owner before it, or null. */
    PodKey add(IpAddress ip, PodKey pod) {
        Object c = claimants.get(ip);
        if (c == null) {
            claimants.put(ip, pod);
            return null;
        }
        if (c instanceof PodKey k) {
            if (k.equals(pod)) {
                return k;
            }
            TreeSet<PodKey> set = new TreeSet<>();
            set.add(k);
            set.add(pod);
            claimants.put(ip, set);
            return k;
        }
        PodKey owner = first(c);
        set(c).add(pod);
        return owner;
    }

    /** Takes back {@code pod}'s claim; returns the owner after it, or null if nobody claims the address now. */
    PodKey remove(IpAddress ip, PodKey pod) {
        Object c = claimants.get(ip);
        if (c == null) {
            return null;
        }
        if (c instanceof PodKey k) {
            if (k.equals(pod)) {
                claimants.remove(ip);
                return null;
            }
            return k;
        }
        TreeSet<PodKey> set = set(c);
        set.remove(pod);
        if (set.size() == 1) {
            claimants.put(ip, set.first());
        }
        return set.first();
    }

    private static PodKey first(Object set) {
        return set(set).first();
    }

    @SuppressWarnings("unchecked")
    private static TreeSet<PodKey> set(Object c) {
        return (TreeSet<PodKey>) c;
    }
}
