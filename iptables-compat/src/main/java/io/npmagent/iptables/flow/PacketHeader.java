package io.npmagent.iptables.flow;

import io.npmagent.dataplane.model.IpAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The addresses, protocol, destination port and length of an IP packet, read from the first bytes of it
 * that NFLOG copied ({@link FlowMarks#SNAPLEN}). IPv6 extension headers that come before the transport
 * header (hop-by-hop, routing, destination options, fragment) are skipped; a fragment other than the
 * first has no ports (port 0).
 *
 * @param length the packet's length as its IP header says (the bytes it counts), not what was copied
 * @param port   the destination port for TCP, UDP, UDP-Lite and SCTP; 0 for other protocols
 */
public record PacketHeader(IpAddress source, IpAddress destination, int protocol, int port, int length) {
    private static final int TCP = 6;
    private static final int UDP = 17;
    private static final int UDPLITE = 136;
    private static final int SCTP = 132;

    /** Reads {@code bytes}; a packet too short to hold its IP header is refused. */
    public static PacketHeader parse(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.BIG_ENDIAN);
        if (bytes.length < 1) {
            throw new IllegalArgumentException("empty packet");
        }
        int version = (bytes[0] & 0xff) >> 4;
        if (version == 4) {
            need(bytes, 20, "IPv4 header");
            int ihl = (bytes[0] & 0x0f) * 4;
            if (ihl < 20) {
                throw new IllegalArgumentException("IPv4 header length " + ihl + " below 20");
            }
            int length = b.getShort(2) & 0xffff;
            boolean laterFragment = (b.getShort(6) & 0x1fff) != 0;
            int protocol = bytes[9] & 0xff;
            IpAddress src = IpAddress.v4(b.getInt(12));
            IpAddress dst = IpAddress.v4(b.getInt(16));
            return new PacketHeader(src, dst, protocol, laterFragment ? 0 : port(bytes, ihl, protocol), length);
        }
        if (version == 6) {
            need(bytes, 40, "IPv6 header");
            int length = (b.getShort(4) & 0xffff) + 40;
            int next = bytes[6] & 0xff;
            IpAddress src = IpAddress.v6(b.getLong(8), b.getLong(16));
            IpAddress dst = IpAddress.v6(b.getLong(24), b.getLong(32));
            int offset = 40;
            boolean laterFragment = false;
            while (offset + 8 <= bytes.length && (next == 0 || next == 43 || next == 60 || next == 44)) {
                int header = next;
                next = bytes[offset] & 0xff;
                if (header == 44) {
                    laterFragment = (b.getShort(offset + 2) & 0xfff8) != 0;
                    offset += 8;
                } else {
                    offset += ((bytes[offset + 1] & 0xff) + 1) * 8;
                }
            }
            return new PacketHeader(src, dst, next, laterFragment ? 0 : port(bytes, offset, next), length);
        }
        throw new IllegalArgumentException("not an IP packet: version " + version);
    }

    private static int port(byte[] bytes, int offset, int protocol) {
        if (protocol != TCP && protocol != UDP && protocol != UDPLITE && protocol != SCTP) {
            return 0;
        }
        if (offset + 4 > bytes.length) {
            return 0; // copied too little to see it: the flow still counts, by address and protocol
        }
        return ((bytes[offset + 2] & 0xff) << 8) | (bytes[offset + 3] & 0xff);
    }

    private static void need(byte[] bytes, int n, String what) {
        if (bytes.length < n) {
            throw new IllegalArgumentException(what + " needs " + n + " bytes, got " + bytes.length);
        }
    }
}
