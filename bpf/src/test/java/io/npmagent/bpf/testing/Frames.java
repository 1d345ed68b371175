package io.npmagent.bpf.testing;

import io.npmagent.dataplane.model.IpAddress;
import java.nio.ByteBuffer;

/**
 * Ethernet frames for BPF_PROG_TEST_RUN, built by hand so that every field a program reads is one a
 * test chose: IPv4 (with a valid header checksum) or IPv6 by the addresses' family; TCP, UDP, ICMP
 * echo, ICMP errors carrying another frame's packet, neighbour solicitations, later fragments. L4
 * checksums are left zero: the programs never read them.
 */
public final class Frames {
    public static final int TCP = 6;
    public static final int UDP = 17;
    private static final byte[] SRC_MAC = {0x02, 0, 0, 0, 0, 0x01};
    private static final byte[] DST_MAC = {0x02, 0, 0, 0, 0, 0x02};

    private Frames() {}

    /** A TCP SYN. */
    public static byte[] tcp(String src, int sport, String dst, int dport) {
        return ip(src, dst, TCP, tcpHeader(sport, dport, 0x02), false);
    }

    /** A TCP segment with ACK set: what a reply or an established flow carries. */
    public static byte[] tcpAck(String src, int sport, String dst, int dport) {
        return ip(src, dst, TCP, tcpHeader(sport, dport, 0x10), false);
    }

    /** A TCP segment with the given flags (FIN 0x01, SYN 0x02, RST 0x04, ACK 0x10). */
    public static byte[] tcpFlags(String src, int sport, String dst, int dport, int flags) {
        return ip(src, dst, TCP, tcpHeader(sport, dport, flags), false);
    }

    public static byte[] udp(String src, int sport, String dst, int dport) {
        ByteBuffer b = ByteBuffer.allocate(8 + 4);
        b.putShort((short) sport).putShort((short) dport).putShort((short) 12).putShort((short) 0).putInt(0x6e706d21);
        return ip(src, dst, UDP, b.array(), false);
    }

    /**
     * A UDP datagram from port 4000 to 5000 that makes a frame of exactly {@code frameBytes}, with ECN
     * field {@code ecn} (0: not ECN-capable, 2: ECT(0), 3: CE) in its IP header.
     */
    public static byte[] udpSized(String src, String dst, int frameBytes, int ecn) {
        int payload = frameBytes - 14 - (IpAddress.parse(src).v6() ? 40 : 20);
        ByteBuffer b = ByteBuffer.allocate(payload);
        b.putShort((short) 4000).putShort((short) 5000).putShort((short) payload).putShort((short) 0);
        return ip(src, dst, UDP, b.array(), false, ecn);
    }

    /** The ECN field of a frame of this class. */
    public static int ecn(byte[] frame) {
        boolean v6 = ((frame[12] & 0xff) << 8 | (frame[13] & 0xff)) == 0x86dd;
        return v6 ? (ByteBuffer.wrap(frame).getInt(14) >>> 20) & 3 : frame[15] & 3;
    }

    /** Whether a frame of this class still has a valid IPv4 header checksum (after a program rewrote it). */
    public static boolean ipv4ChecksumValid(byte[] frame) {
        return checksum(frame, 14, 20) == 0;
    }

    /** An echo request (ICMP or ICMPv6 by family). */
    public static byte[] ping(String src, String dst) {
        boolean v6 = IpAddress.parse(src).v6();
        byte[] icmp = ByteBuffer.allocate(8).put((byte) (v6 ? 128 : 8)).put((byte) 0).putShort((short) 0).putInt(0x00010001).array();
        return ip(src, dst, v6 ? 58 : 1, icmp, false);
    }

    /**
     * An ICMP error from {@code src} to {@code dst} about {@code offending} (a frame of this class, whose
     * packet it carries): destination unreachable / fragmentation needed, or ICMPv6 packet too big.
     */
    public static byte[] icmpError(String src, String dst, byte[] offending) {
        boolean v6 = IpAddress.parse(src).v6();
        int carried = Math.min(offending.length - 14, v6 ? 1232 : 548);
        ByteBuffer b = ByteBuffer.allocate(8 + carried);
        b.put((byte) (v6 ? 2 : 3)).put((byte) (v6 ? 0 : 4)).putShort((short) 0).putInt(v6 ? 1280 : 1400);
        b.put(offending, 14, carried);
        return ip(src, dst, v6 ? 58 : 1, b.array(), false);
    }

    /** An IPv6 neighbour solicitation for {@code target}, to its solicited-node multicast group. */
    public static byte[] neighbourSolicitation(String src, String target) {
        byte[] t = IpAddress.parse(target).toBytes();
        String group = String.format("ff02::1:ff%02x:%02x%02x", t[13] & 0xff, t[14] & 0xff, t[15] & 0xff);
        ByteBuffer b = ByteBuffer.allocate(24).put((byte) 135).put((byte) 0).putShort((short) 0).putInt(0).put(t);
        return ip(src, group, 58, b.array(), false);
    }

    /**
     * An MLDv2 listener report, as the kernel sends one when an interface comes up: ICMPv6 type 143
     * behind a hop-by-hop options header (router alert), to ff02::16.
     */
    public static byte[] mldReport(String src) {
        ByteBuffer b = ByteBuffer.allocate(8 + 8);
        b.put((byte) 58).put((byte) 0).put(new byte[] {5, 2, 0, 0, 1, 0}); // next: ICMPv6; router alert; PadN
        b.put((byte) 143).put((byte) 0).putShort((short) 0).putShort((short) 0).putShort((short) 0); // no records
        return ip(src, "ff02::16", 0, b.array(), false);
    }

    /** A later IPv4 fragment of a {@code protocol} packet: no L4 header, so no ports. */
    public static byte[] laterFragment(String src, String dst, int protocol) {
        return ip(src, dst, protocol, new byte[16], true);
    }

    /** An ARP request: not IP. */
    public static byte[] arp() {
        ByteBuffer b = ByteBuffer.allocate(14 + 28);
        b.put(new byte[] {-1, -1, -1, -1, -1, -1}).put(SRC_MAC).putShort((short) 0x0806);
        b.putShort((short) 1).putShort((short) 0x0800).put((byte) 6).put((byte) 4).putShort((short) 1)
                .put(SRC_MAC).put(new byte[4]).put(new byte[6]).put(new byte[4]);
        return b.array();
    }

    private static byte[] tcpHeader(int sport, int dport, int flags) {
        ByteBuffer b = ByteBuffer.allocate(20);
        b.putShort((short) sport).putShort((short) dport).putInt(1).putInt((flags & 0x10) != 0 ? 1 : 0)
                .put((byte) 0x50).put((byte) flags).putShort((short) 64240).putShort((short) 0).putShort((short) 0);
        return b.array();
    }

    private static byte[] ip(String src, String dst, int protocol, byte[] payload, boolean laterFragment) {
        return ip(src, dst, protocol, payload, laterFragment, 0);
    }

    private static byte[] ip(String src, String dst, int protocol, byte[] payload, boolean laterFragment, int ecn) {
        IpAddress s = IpAddress.parse(src);
        IpAddress d = IpAddress.parse(dst);
        if (s.v6() != d.v6()) {
            throw new IllegalArgumentException(src + " and " + dst + " are of different families");
        }
        ByteBuffer b = ByteBuffer.allocate(14 + (s.v6() ? 40 : 20) + payload.length);
        b.put(DST_MAC).put(SRC_MAC).putShort((short) (s.v6() ? 0x86dd : 0x0800));
        if (s.v6()) {
            b.putInt(0x60000000 | (ecn & 3) << 20).putShort((short) payload.length).put((byte) protocol).put((byte) 64).put(s.toBytes()).put(d.toBytes());
        } else {
            int at = b.position();
            b.put((byte) 0x45).put((byte) (ecn & 3)).putShort((short) (20 + payload.length)).putShort((short) 1)
                    .putShort((short) (laterFragment ? 0x00b9 : 0x4000)) // offset 185*8, or DF
                    .put((byte) 64).put((byte) protocol).putShort((short) 0).put(s.toBytes()).put(d.toBytes());
            b.putShort(at + 10, checksum(b.array(), at, 20));
        }
        b.put(payload);
        return b.array();
    }

    private static short checksum(byte[] data, int offset, int length) {
        int sum = 0;
        for (int i = offset; i < offset + length; i += 2) {
            sum += ((data[i] & 0xff) << 8) | (data[i + 1] & 0xff);
        }
        while ((sum >> 16) != 0) {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        return (short) ~sum;
    }
}
