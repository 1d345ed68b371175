package io.npmagent.bpf.libbpf;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The few route-netlink requests the agent makes itself rather than through {@code ip}: reading a link's
 * GSO/GRO limits and its veth peer, setting those limits (iproute2 6.1 cannot set the IPv4 ones, which
 * came with 6.3), and the id a namespace has for another. Each request opens a socket on the calling
 * thread, so it talks to that thread's network namespace (see {@link NetnsThread}).
 */
public final class Rtnetlink {
    private static final int AF_NETLINK = 16;
    private static final int SOCK_RAW = 3;
    private static final int SOCK_CLOEXEC = 0x80000;
    private static final int NETLINK_ROUTE = 0;
    private static final int NLMSG_HDRLEN = 16;
    private static final short NLMSG_ERROR = 2;
    private static final short NLM_F_REQUEST = 1;
    private static final short NLM_F_ACK = 4;
    private static final short RTM_NEWLINK = 16;
    private static final short RTM_GETLINK = 18;
    private static final short RTM_GETNSID = 90;
    private static final int IFINFOMSG_LEN = 16;
    private static final int RTGENMSG_LEN = 4; // struct rtgenmsg, padded to NLMSG_ALIGNTO

    // enum IFLA_* (linux/if_link.h)
    static final int IFLA_IFNAME = 3;
    static final int IFLA_LINK = 5;
    static final int IFLA_MASTER = 10;
    public static final int IFLA_GSO_MAX_SIZE = 41;
    static final int IFLA_LINK_NETNSID = 37;
    public static final int IFLA_GRO_MAX_SIZE = 58;
    static final int IFLA_TSO_MAX_SIZE = 59;
    public static final int IFLA_GSO_IPV4_MAX_SIZE = 63;
    public static final int IFLA_GRO_IPV4_MAX_SIZE = 64;
    // enum NETNSA_* (linux/net_namespace.h)
    private static final int NETNSA_NSID = 1;
    private static final int NETNSA_FD = 3;

    private Rtnetlink() {}

    /**
     * A link as the kernel reports it. {@code peer} is a veth's other end (its index in the namespace
     * {@code peerNetnsId} names, -1 for none: the peer is in this namespace); {@code master} the bridge
     * it is a port of (0: none). The IPv4 limits are -1 where the kernel has none (before 6.3).
     */
    public record Link(int ifindex, int master, int peer, int peerNetnsId, long gsoMaxSize, long groMaxSize, long gsoIpv4MaxSize,
            long groIpv4MaxSize, long tsoMaxSize) {
        public boolean hasIpv4Limits() {
            return gsoIpv4MaxSize >= 0 && groIpv4MaxSize >= 0;
        }
    }

    /** The link with this index in the calling thread's namespace. */
    public static Link link(int ifindex) {
        ByteBuffer req = message(RTM_GETLINK, NLM_F_REQUEST, IFINFOMSG_LEN);
        ifinfomsg(req, ifindex);
        return link(reply(req, "RTM_GETLINK " + ifindex));
    }

    /** The link with this name in the calling thread's namespace. */
    public static Link link(String name) {
        byte[] text = name.getBytes(StandardCharsets.US_ASCII);
        int attr = (4 + text.length + 1 + 3) & ~3;
        ByteBuffer req = message(RTM_GETLINK, NLM_F_REQUEST, IFINFOMSG_LEN + attr);
        ifinfomsg(req, 0);
        req.putShort((short) (4 + text.length + 1)).putShort((short) IFLA_IFNAME).put(text);
        return link(reply(req, "RTM_GETLINK " + name));
    }

    private static Link link(ByteBuffer reply) {
        int ifindex = reply.getInt(4); // ifinfomsg.ifi_index
        Map<Integer, Long> a = attributes(reply, IFINFOMSG_LEN);
        return new Link(ifindex, a.getOrDefault(IFLA_MASTER, 0L).intValue(),
                a.containsKey(IFLA_LINK) && a.containsKey(IFLA_LINK_NETNSID) ? a.get(IFLA_LINK).intValue() : -1,
                a.getOrDefault(IFLA_LINK_NETNSID, -1L).intValue(), a.getOrDefault(IFLA_GSO_MAX_SIZE, -1L),
                a.getOrDefault(IFLA_GRO_MAX_SIZE, -1L), a.getOrDefault(IFLA_GSO_IPV4_MAX_SIZE, -1L),
                a.getOrDefault(IFLA_GRO_IPV4_MAX_SIZE, -1L), a.getOrDefault(IFLA_TSO_MAX_SIZE, -1L));
    }

    /** Sets the given IFLA_* u32 attributes (the limits above) of a link in the calling thread's namespace. */
    public static void set(int ifindex, Map<Integer, Long> u32s) {
        ByteBuffer req = message(RTM_NEWLINK, (short) (NLM_F_REQUEST | NLM_F_ACK), IFINFOMSG_LEN + 8 * u32s.size());
        ifinfomsg(req, ifindex);
        u32s.forEach((type, value) -> u32(req, type, value.intValue()));
        reply(req, "RTM_NEWLINK " + ifindex + " " + u32s);
    }

    /** The id the calling thread's namespace has for the namespace of {@code nsFile} (/run/netns/NAME), -1 if none yet. */
    public static int netnsId(Path nsFile) {
        int fd = LibC.lib().open(nsFile.toString(), LibC.O_RDONLY | LibC.O_CLOEXEC);
        if (fd < 0) {
            throw LibBpfNative.error("open", nsFile.toString(), LibC.errno());
        }
        try {
            ByteBuffer req = message(RTM_GETNSID, NLM_F_REQUEST, RTGENMSG_LEN + 8);
            req.put(NLMSG_HDRLEN, (byte) 0); // rtgen_family AF_UNSPEC
            req.position(NLMSG_HDRLEN + RTGENMSG_LEN);
            u32(req, NETNSA_FD, fd);
            Map<Integer, Long> a = attributes(reply(req, "RTM_GETNSID " + nsFile), RTGENMSG_LEN);
            long id = a.getOrDefault(NETNSA_NSID, -1L);
            return id > Integer.MAX_VALUE ? -1 : (int) id; // NETNSA_NSID_NOT_ASSIGNED is -1 as an s32
        } finally {
            LibC.lib().close(fd);
        }
    }

    private static ByteBuffer message(short type, short flags, int payload) {
        ByteBuffer b = ByteBuffer.allocate(NLMSG_HDRLEN + payload).order(ByteOrder.nativeOrder());
        b.putInt(NLMSG_HDRLEN + payload).putShort(type).putShort(flags).putInt(1).putInt(0);
        return b;
    }

    private static void ifinfomsg(ByteBuffer b, int ifindex) {
        b.put((byte) 0).put((byte) 0).putShort((short) 0).putInt(ifindex).putInt(0).putInt(0);
    }

    private static void u32(ByteBuffer b, int type, int value) {
        b.putShort((short) 8).putShort((short) type).putInt(value);
    }

    /** Sends one request and returns the payload of its answer (an ACK's is empty); a kernel error throws. */
    private static ByteBuffer reply(ByteBuffer req, String what) {
        int fd = LibC.lib().socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (fd < 0) {
            throw LibBpfNative.error("socket(AF_NETLINK)", what, LibC.errno());
        }
        try {
            byte[] bytes = req.array();
            if (LibC.lib().send(fd, bytes, bytes.length, 0) != bytes.length) {
                throw LibBpfNative.error("send", what, LibC.errno());
            }
            byte[] buf = new byte[32768];
            long n = LibC.lib().recv(fd, buf, buf.length, 0);
            if (n < NLMSG_HDRLEN) {
                throw LibBpfNative.error("recv", what, LibC.errno());
            }
            ByteBuffer r = ByteBuffer.wrap(buf, 0, (int) n).order(ByteOrder.nativeOrder());
            int len = r.getInt(0);
            short type = r.getShort(4);
            if (type == NLMSG_ERROR) {
                int errno = -r.getInt(NLMSG_HDRLEN);
                if (errno != 0) {
                    throw LibBpfNative.error("netlink", what, errno);
                }
                return ByteBuffer.allocate(0);
            }
            return ByteBuffer.wrap(buf, NLMSG_HDRLEN, Math.min(len, (int) n) - NLMSG_HDRLEN).slice().order(ByteOrder.nativeOrder());
        } finally {
            LibC.lib().close(fd);
        }
    }

    /** The u32/s32 attributes after a fixed header of {@code skip} bytes (others are read as their first 4 bytes and unused). */
    static Map<Integer, Long> attributes(ByteBuffer payload, int skip) {
        Map<Integer, Long> out = new LinkedHashMap<>();
        int at = skip;
        while (at + 4 <= payload.limit()) {
            int len = Short.toUnsignedInt(payload.getShort(at));
            int type = Short.toUnsignedInt(payload.getShort(at + 2)) & 0x3fff; // NLA_F_NESTED, NLA_F_NET_BYTEORDER off
            if (len < 4 || at + len > payload.limit()) {
                break;
            }
            if (len == 8) {
                out.put(type, Integer.toUnsignedLong(payload.getInt(at + 4)));
            }
            at += (len + 3) & ~3;
        }
        return out;
    }
}
