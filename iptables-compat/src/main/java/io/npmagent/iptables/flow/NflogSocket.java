package io.npmagent.iptables.flow;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A netlink socket bound to one nfnetlink_log group, in the network namespace of the thread that opened
 * it: the kernel sends it a message per packet a {@code log group G} (nft) or {@code -j NFLOG
 * --nflog-group G} (iptables) rule logs. Binding a group another socket holds is refused by the kernel
 * ({@code EBUSY}), and said so.
 *
 * <p>{@link #receive} waits at most the receive timeout, so the reading thread can notice a close; it
 * tells a buffer overrun ({@code ENOBUFS}: the kernel dropped messages the reader did not take in time)
 * apart from data.
 */
final class NflogSocket implements AutoCloseable {
    /** What {@link #receive} returns when the timeout passed with nothing to read. */
    static final int TIMED_OUT = -1;
    /** What {@link #receive} returns when the kernel dropped messages for want of buffer. */
    static final int OVERRUN = -2;

    private final int fd;
    private int seq;

    private NflogSocket(int fd) {
        this.fd = fd;
    }

    /**
     * Opens a socket, binds it to {@code group} for IPv4 and IPv6, with at most {@code copyRange} bytes of
     * each packet copied, and a receive buffer of {@code bufferBytes}.
     */
    static NflogSocket open(int group, int copyRange, int bufferBytes, int timeoutMillis) {
        int fd = NetlinkLibC.lib().socket(NetlinkLibC.AF_NETLINK, NetlinkLibC.SOCK_RAW | NetlinkLibC.SOCK_CLOEXEC,
                NetlinkLibC.NETLINK_NETFILTER);
        if (fd < 0) {
            throw new IllegalStateException("cannot open a NETLINK_NETFILTER socket: errno " + NetlinkLibC.errno());
        }
        NflogSocket s = new NflogSocket(fd);
        try {
            s.option(NetlinkLibC.SO_RCVTIMEO, timeval(timeoutMillis));
            byte[] size = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(bufferBytes).array();
            if (NetlinkLibC.lib().setsockopt(fd, NetlinkLibC.SOL_SOCKET, NetlinkLibC.SO_RCVBUFFORCE, size, 4) != 0) {
                s.option(NetlinkLibC.SO_RCVBUF, size); // without CAP_NET_ADMIN: as much as rmem_max allows
            }
            // Older kernels keep a logger per family: take it over (newer ones accept these and do nothing).
            for (int family : new int[] {NflogMessages.AF_INET, NflogMessages.AF_INET6}) {
                s.request(NflogMessages.command(++s.seq, family, 0, NflogMessages.CMD_PF_UNBIND), "PF_UNBIND", true);
                s.request(NflogMessages.command(++s.seq, family, 0, NflogMessages.CMD_PF_BIND), "PF_BIND", true);
            }
            s.request(NflogMessages.command(++s.seq, NflogMessages.AF_UNSPEC, group, NflogMessages.CMD_BIND), "BIND group " + group, false);
            s.request(NflogMessages.copyPacket(++s.seq, group, copyRange), "COPY_PACKET " + copyRange, false);
            s.request(NflogMessages.queueThreshold(++s.seq, group, 1), "QTHRESH 1", false);
            return s;
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
    }

    private static byte[] timeval(int millis) {
        return ByteBuffer.allocate(16).order(ByteOrder.nativeOrder()).putLong(millis / 1000).putLong((millis % 1000) * 1000L).array();
    }

    private void option(int name, byte[] value) {
        if (NetlinkLibC.lib().setsockopt(fd, NetlinkLibC.SOL_SOCKET, name, value, value.length) != 0) {
            throw new IllegalStateException("setsockopt(" + name + ") on the NFLOG socket: errno " + NetlinkLibC.errno());
        }
    }

    /** Sends a configuration request and waits for its acknowledgement; a refusal throws unless {@code tolerated}. */
    private void request(byte[] message, String what, boolean tolerated) {
        int mySeq = ByteBuffer.wrap(message).order(ByteOrder.nativeOrder()).getInt(8);
        if (NetlinkLibC.lib().send(fd, message, message.length, 0) != message.length) {
            throw new IllegalStateException("NFLOG " + what + ": send failed, errno " + NetlinkLibC.errno());
        }
        byte[] buf = new byte[8192];
        for (int tries = 0; tries < 100; tries++) {
            int n = receive(buf);
            if (n == TIMED_OUT) {
                throw new IllegalStateException("NFLOG " + what + ": no acknowledgement from the kernel");
            }
            if (n <= 0) {
                continue;
            }
            for (int[] ack : NflogMessages.parse(buf, n).acks()) {
                if (ack[0] == mySeq) {
                    if (ack[1] != 0 && !tolerated) {
                        throw new IllegalStateException("NFLOG " + what + " refused by the kernel: errno " + -ack[1]
                                + (-ack[1] == 16 ? " (another program holds the group)" : ""));
                    }
                    return;
                }
            }
        }
        throw new IllegalStateException("NFLOG " + what + ": no acknowledgement among the messages read");
    }

    /** Reads one datagram into {@code buf}: its length, {@link #TIMED_OUT} or {@link #OVERRUN}. */
    int receive(byte[] buf) {
        while (true) {
            long n = NetlinkLibC.lib().recv(fd, buf, buf.length, 0);
            if (n >= 0) {
                return (int) n;
            }
            int errno = NetlinkLibC.errno();
            if (errno == NetlinkLibC.EINTR) {
                continue;
            }
            if (errno == NetlinkLibC.EAGAIN) {
                return TIMED_OUT;
            }
            if (errno == NetlinkLibC.ENOBUFS) {
                return OVERRUN;
            }
            throw new IllegalStateException("recv on the NFLOG socket: errno " + errno);
        }
    }

    @Override
    public void close() {
        NetlinkLibC.lib().close(fd);
    }
}
