package io.npmagent.bpf.libbpf;

import java.nio.ByteBuffer;

/** Frames for test runs, from the Ethernet header on, with valid IPv4 header checksums. */
final class Packets {
    private Packets() {}

    static final byte[] SRC_MAC = {0x02, 0, 0, 0, 0, 0x01};
    static final byte[] DST_MAC = {0x02, 0, 0, 0, 0, 0x02};

    /** A TCP SYN from 10.99.0.{src}:{sport} to 10.99.0.{dst}:{dport}. */
    static byte[] tcpV4(int src, int dst, int sport, int dport) {
        ByteBuffer b = ByteBuffer.allocate(14 + 20 + 20); // network order throughout
        b.put(DST_MAC).put(SRC_MAC).putShort((short) 0x0800);
        int ip = b.position();
        b.put((byte) 0x45).put((byte) 0).putShort((short) 40) // version+ihl, tos, total length
                .putShort((short) 1).putShort((short) 0x4000) // id, DF
                .put((byte) 64).put((byte) 6).putShort((short) 0) // ttl, TCP, checksum (below)
                .put(new byte[] {10, 99, 0, (byte) src}).put(new byte[] {10, 99, 0, (byte) dst});
        b.putShort(ip + 10, checksum(b.array(), ip, 20));
        b.putShort((short) sport).putShort((short) dport).putInt(1).putInt(0)
                .put((byte) 0x50).put((byte) 0x02).putShort((short) 64240) // data offset 5, SYN, window
                .putShort((short) 0).putShort((short) 0); // checksum (not checked on this path), urgent
        return b.array();
    }

    /** An ARP request: not IP, so every program lets it pass untouched. */
    static byte[] arp() {
        ByteBuffer b = ByteBuffer.allocate(14 + 28);
        b.put(new byte[] {-1, -1, -1, -1, -1, -1}).put(SRC_MAC).putShort((short) 0x0806);
        b.putShort((short) 1).putShort((short) 0x0800).put((byte) 6).put((byte) 4).putShort((short) 1)
                .put(SRC_MAC).put(new byte[] {10, 99, 0, 1}).put(new byte[6]).put(new byte[] {10, 99, 0, 2});
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
