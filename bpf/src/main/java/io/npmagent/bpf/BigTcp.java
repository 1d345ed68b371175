package io.npmagent.bpf;

import io.npmagent.bpf.libbpf.BpfException;
import io.npmagent.bpf.libbpf.NetnsThread;
import io.npmagent.bpf.libbpf.Rtnetlink;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * BIG TCP for pods, opt-in ({@code --big-tcp}): both ends of a pod's veth may carry GSO/GRO packets of
 * up to {@value #SIZE} bytes instead of 64 KiB, so a pod's TCP stack hands the node a third as many
 * packets for the same bytes (Cilium's default size). The pod's TCP picks the size up when a
 * connection starts, so connections made before keep 64 KiB.
 *
 * <p>IPv4 (gso/gro_ipv4_max_size, kernel 6.3 and later) on every pod. IPv6 (gso/gro_max_size) only on
 * a bridged pod: a routed node forwards between pods through its IPv6 stack, which answers a packet
 * over 64 KiB with "Packet Too Big" (measured on 6.18: IPv6 TCP between two routed pods stalled at 0
 * bytes), where a bridge passes it on. The shapers charge a packet skb->len, its true length at any
 * size. The pod's end is reached through its network namespace's file under /run/netns (where
 * {@code ip netns}, containerd's CNI and the sandbox keep them); a pod whose namespace is not there
 * keeps 64 KiB on its own end, which is what limits its sends, and the log says so.
 */
public final class BigTcp {
    static final long SIZE = 196_608;
    private static final Path NETNS_DIR = Path.of("/run/netns");
    private static final System.Logger LOG = System.getLogger(BigTcp.class.getName());

    /**
     * Namespace files by the id the node's namespace has for them, as of {@link #scanned}: the directory
     * is read again only when it changed since, so pods whose namespace is elsewhere do not each cost a
     * pass over every file in it. Files that had no id yet (a pod's namespace before its veth: the id
     * comes with the veth) are asked again on every miss.
     */
    private final Map<Integer, Path> netnsById = new HashMap<>();
    private final List<Path> withoutId = new ArrayList<>();
    private FileTime scanned;

    /** For the backend's status line. */
    public static String describe() {
        return "big tcp: pods' veths raised to " + SIZE + " bytes as they are attached (IPv4; IPv6 on bridged pods)";
    }

    /** What {@link #raise} did to one pod's veth, for the log and tests. */
    record Raised(boolean ipv4, boolean ipv6, boolean podEnd, String why) {}

    /**
     * Raises the limits on the node's end of the veth {@code ifindex} and on its pod end. Runs on the
     * node namespace's thread (the caller's); the pod's end on a thread of its own namespace.
     */
    Raised raise(int ifindex) {
        Rtnetlink.Link node = Rtnetlink.link(ifindex);
        boolean ipv6 = node.master() > 0;
        Map<Integer, Long> sizes = sizes(node, ipv6);
        if (sizes.isEmpty()) {
            return new Raised(false, false, false, "this kernel has no IPv4 GSO/GRO limits (6.3 and later) and the pod is routed");
        }
        Rtnetlink.set(ifindex, sizes);
        if (node.peer() < 0) {
            return new Raised(node.hasIpv4Limits(), ipv6, false, "not a veth with its other end in another namespace");
        }
        Path ns = netnsFile(node.peerNetnsId());
        if (ns == null) {
            return new Raised(node.hasIpv4Limits(), ipv6, false, "the pod's network namespace is not under " + NETNS_DIR);
        }
        try (NetnsThread pod = NetnsThread.enter(ns)) {
            pod.run(() -> {
                Rtnetlink.Link end = Rtnetlink.link(node.peer());
                Rtnetlink.set(end.ifindex(), sizes(end, ipv6));
            });
        }
        return new Raised(node.hasIpv4Limits(), ipv6, true, "");
    }

    /** {@link #raise}, logged rather than thrown: a pod keeps its 64 KiB packets, never its enforcement, when this fails. */
    void raiseLogged(int ifindex) {
        try {
            Raised r = raise(ifindex);
            if (!r.podEnd() || !r.ipv4()) {
                LOG.log(System.Logger.Level.WARNING, "bpf: BIG TCP on interface {0}: IPv4 {1}, IPv6 {2}, pod end {3}: {4}", ifindex,
                        r.ipv4(), r.ipv6(), r.podEnd(), r.why());
            }
        } catch (BpfException | IllegalStateException e) {
            LOG.log(System.Logger.Level.WARNING, "bpf: BIG TCP on interface {0} not raised: {1}", ifindex, e.getMessage());
        }
    }

    private static Map<Integer, Long> sizes(Rtnetlink.Link link, boolean ipv6) {
        long size = link.tsoMaxSize() > 0 ? Math.min(SIZE, link.tsoMaxSize()) : SIZE;
        Map<Integer, Long> out = new LinkedHashMap<>();
        if (link.hasIpv4Limits()) {
            out.put(Rtnetlink.IFLA_GSO_IPV4_MAX_SIZE, size);
            out.put(Rtnetlink.IFLA_GRO_IPV4_MAX_SIZE, size);
        }
        if (ipv6) {
            out.put(Rtnetlink.IFLA_GSO_MAX_SIZE, size);
            out.put(Rtnetlink.IFLA_GRO_MAX_SIZE, size);
        }
        return out;
    }

    private Path netnsFile(int id) {
        Path known = netnsById.get(id);
        if (known != null && Files.exists(known)) {
            return known;
        }
        FileTime modified;
        try {
            modified = Files.getLastModifiedTime(NETNS_DIR);
        } catch (IOException e) {
            return null;
        }
        List<Path> ask = new ArrayList<>(withoutId);
        if (!modified.equals(scanned)) {
            scanned = modified;
            netnsById.clear();
            ask.clear();
            try (Stream<Path> files = Files.list(NETNS_DIR)) {
                files.forEach(ask::add);
            } catch (IOException e) {
                return null;
            }
        }
        withoutId.clear();
        for (Path f : ask) {
            try {
                int i = Rtnetlink.netnsId(f);
                if (i >= 0) {
                    netnsById.put(i, f);
                } else {
                    withoutId.add(f);
                }
            } catch (BpfException e) {
                // not a namespace file (or gone meanwhile)
            }
        }
        return netnsById.get(id);
    }
}
