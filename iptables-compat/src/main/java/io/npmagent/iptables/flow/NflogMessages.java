package io.npmagent.iptables.flow;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The nfnetlink_log wire format (linux/netfilter/nfnetlink_log.h): the configuration requests that bind a
 * socket to a log group, and the packet messages the kernel sends for it. Pure bytes in, bytes out, so
 * it is tested without a kernel.
 *
 * <p>A netlink message is {@code nlmsghdr} (host byte order) then {@code nfgenmsg} (family, version, the
 * group in network byte order) then attributes ({@code nlattr}: length, type, value, padded to 4). The
 * values of nfnetlink_log's attributes are in network byte order.
 */
public final class NflogMessages {
    static final int NLMSG_HDRLEN = 16;
    static final int NFGENMSG_LEN = 4;
    static final short NLMSG_ERROR = 2;
    static final short NLMSG_DONE = 3;
    static final short NLM_F_REQUEST = 1;
    static final short NLM_F_ACK = 4;
    static final int NFNL_SUBSYS_ULOG = 4;
    static final int NFULNL_MSG_PACKET = 0;
    static final int NFULNL_MSG_CONFIG = 1;
    // config attributes and commands
    static final int NFULA_CFG_CMD = 1;
    static final int NFULA_CFG_MODE = 2;
    static final int NFULA_CFG_NLBUFSIZ = 3;
    static final int NFULA_CFG_QTHRESH = 5;
    static final byte CMD_BIND = 1;
    static final byte CMD_UNBIND = 2;
    static final byte CMD_PF_BIND = 3;
    static final byte CMD_PF_UNBIND = 4;
    static final byte COPY_PACKET = 2;
    // packet attributes
    static final int NFULA_TIMESTAMP = 3;
    static final int NFULA_PAYLOAD = 9;
    static final int NFULA_PREFIX = 10;
    static final int AF_UNSPEC = 0;
    static final int AF_INET = 2;
    static final int AF_INET6 = 10;

    private NflogMessages() {}

    /** One logged packet: the rule's prefix, the copied bytes of the packet (from its IP header), and when it was logged (null if the kernel gave no time). */
    public record Packet(String prefix, byte[] payload, Instant timestamp) {}

    /** What one datagram from the socket holds: the packets, and the error of each acknowledgement (0: done) by sequence number. */
    public record Batch(List<Packet> packets, List<int[]> acks) {}

    /** A configuration request: {@code CMD} for a group (or a family, for the PF commands), acknowledged. */
    static byte[] command(int seq, int family, int group, byte command) {
        ByteBuffer b = header(seq, family, group, 8);
        b.putShort((short) 5).putShort((short) NFULA_CFG_CMD).put(command).put((byte) 0).putShort((short) 0);
        return b.array();
    }

    /** A configuration request: copy packets, at most {@code range} bytes of each. */
    static byte[] copyPacket(int seq, int group, int range) {
        ByteBuffer b = header(seq, AF_UNSPEC, group, 12);
        // struct nfulnl_msg_config_mode { __be32 copy_range; __u8 copy_mode; __u8 _pad; }: 6 bytes, padded to 8
        b.putShort((short) 10).putShort((short) NFULA_CFG_MODE);
        b.order(ByteOrder.BIG_ENDIAN).putInt(range).order(ByteOrder.nativeOrder());
        b.put(COPY_PACKET).put((byte) 0).putShort((short) 0);
        return b.array();
    }

    /**
     * A configuration request: send a batch once it holds {@code packets} messages (the kernel's default
     * is 100, or a second's wait: a report must come within a second of its drop).
     */
    static byte[] queueThreshold(int seq, int group, int packets) {
        ByteBuffer b = header(seq, AF_UNSPEC, group, 8);
        b.putShort((short) 8).putShort((short) NFULA_CFG_QTHRESH);
        b.order(ByteOrder.BIG_ENDIAN).putInt(packets);
        return b.array();
    }

    /** A configuration request: the kernel's buffer for the group's batches of messages, in bytes. */
    static byte[] bufferSize(int seq, int group, int bytes) {
        ByteBuffer b = header(seq, AF_UNSPEC, group, 8);
        b.putShort((short) 8).putShort((short) NFULA_CFG_NLBUFSIZ);
        b.order(ByteOrder.BIG_ENDIAN).putInt(bytes);
        return b.array();
    }

    private static ByteBuffer header(int seq, int family, int group, int attributes) {
        int len = NLMSG_HDRLEN + NFGENMSG_LEN + attributes;
        ByteBuffer b = ByteBuffer.allocate(len).order(ByteOrder.nativeOrder());
        b.putInt(len).putShort((short) (NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_CONFIG)).putShort((short) (NLM_F_REQUEST | NLM_F_ACK))
                .putInt(seq).putInt(0);
        b.put((byte) family).put((byte) 0).order(ByteOrder.BIG_ENDIAN).putShort((short) group).order(ByteOrder.nativeOrder());
        return b;
    }

    /**
     * Every message of a datagram: packets of nfnetlink_log and acknowledgements; anything else is skipped.
     * A message whose length runs past the datagram is refused (the kernel never sends one).
     */
    public static Batch parse(byte[] buf, int len) {
        ByteBuffer b = ByteBuffer.wrap(buf, 0, len).order(ByteOrder.nativeOrder());
        List<Packet> packets = new ArrayList<>();
        List<int[]> acks = new ArrayList<>();
        int at = 0;
        while (at + NLMSG_HDRLEN <= len) {
            int msgLen = b.getInt(at);
            int type = b.getShort(at + 4) & 0xffff;
            int seq = b.getInt(at + 8);
            if (msgLen < NLMSG_HDRLEN || at + msgLen > len) {
                throw new IllegalArgumentException("netlink message of length " + msgLen + " at " + at + " runs past a datagram of " + len);
            }
            if (type == NLMSG_ERROR && msgLen >= NLMSG_HDRLEN + 4) {
                acks.add(new int[] {seq, b.getInt(at + NLMSG_HDRLEN)});
            } else if (type == (NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET) && msgLen >= NLMSG_HDRLEN + NFGENMSG_LEN) {
                packets.add(packet(buf, at + NLMSG_HDRLEN + NFGENMSG_LEN, at + msgLen));
            }
            at += align(msgLen);
        }
        return new Batch(packets, acks);
    }

    private static Packet packet(byte[] buf, int from, int to) {
        ByteBuffer b = ByteBuffer.wrap(buf).order(ByteOrder.nativeOrder());
        String prefix = "";
        byte[] payload = null;
        Instant timestamp = null;
        int at = from;
        while (at + 4 <= to) {
            int attrLen = b.getShort(at) & 0xffff;
            int type = b.getShort(at + 2) & 0x3fff; // without NLA_F_NESTED and NLA_F_NET_BYTEORDER
            if (attrLen < 4 || at + attrLen > to) {
                throw new IllegalArgumentException("netlink attribute of length " + attrLen + " at " + at);
            }
            int value = at + 4;
            int valueLen = attrLen - 4;
            switch (type) {
                case NFULA_PREFIX -> {
                    int end = value;
                    while (end < value + valueLen && buf[end] != 0) {
                        end++;
                    }
                    prefix = new String(buf, value, end - value, StandardCharsets.US_ASCII);
                }
                case NFULA_PAYLOAD -> payload = Arrays.copyOfRange(buf, value, value + valueLen);
                case NFULA_TIMESTAMP -> {
                    if (valueLen >= 16) {
                        ByteBuffer be = ByteBuffer.wrap(buf, value, 16).order(ByteOrder.BIG_ENDIAN);
                        long sec = be.getLong(value);
                        long usec = be.getLong(value + 8);
                        timestamp = Instant.ofEpochSecond(sec, usec * 1000);
                    }
                }
                default -> { }
            }
            at += align(attrLen);
        }
        if (payload == null) {
            throw new IllegalArgumentException("an NFLOG packet message without a payload (prefix \"" + prefix + "\")");
        }
        return new Packet(prefix, payload, timestamp);
    }

    static int align(int n) {
        return (n + 3) & ~3;
    }
}
