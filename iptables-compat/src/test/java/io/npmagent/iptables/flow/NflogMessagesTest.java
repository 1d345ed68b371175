package io.npmagent.iptables.flow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.dataplane.model.IpAddress;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The nfnetlink_log layout, built per the kernel's headers (nfnetlink_log.h, netlink.h), byte by byte. */
class NflogMessagesTest {
    /** An IPv4 TCP SYN 10.99.0.1:40000 -> 10.99.0.2:5201, 60 bytes long, as NFLOG copies it (IP header first). */
    static byte[] ipv4Syn() {
        ByteBuffer b = ByteBuffer.allocate(40).order(ByteOrder.BIG_ENDIAN);
        b.put((byte) 0x45).put((byte) 0).putShort((short) 60).putShort((short) 1).putShort((short) 0x4000).put((byte) 64).put((byte) 6)
                .putShort((short) 0).putInt(0x0a630001).putInt(0x0a630002);
        b.putShort((short) 40000).putShort((short) 5201).putInt(0).putInt(0).putShort((short) 0x5002).putShort((short) 0).putInt(0);
        return b.array();
    }

    /** An IPv6 UDP datagram fd99::1 -> fd99::2:53 behind a hop-by-hop header. */
    static byte[] ipv6UdpWithHopByHop() {
        ByteBuffer b = ByteBuffer.allocate(40 + 8 + 8).order(ByteOrder.BIG_ENDIAN);
        b.putInt(0x60000000).putShort((short) 16).put((byte) 0).put((byte) 64);
        b.putLong(0xfd99000000000000L).putLong(1).putLong(0xfd99000000000000L).putLong(2);
        b.put((byte) 17).put((byte) 0).putShort((short) 0).putInt(0); // hop-by-hop: next UDP, 8 bytes
        b.putShort((short) 33333).putShort((short) 53).putShort((short) 8).putShort((short) 0);
        return b.array();
    }

    /** One NFULNL_MSG_PACKET message: nlmsghdr, nfgenmsg, then PACKET_HDR, TIMESTAMP, PAYLOAD and PREFIX attributes. */
    static byte[] packetMessage(String prefix, byte[] payload, long sec, long usec) {
        ByteArrayOutputStream attrs = new ByteArrayOutputStream();
        attr(attrs, 1, ByteBuffer.allocate(4).order(ByteOrder.BIG_ENDIAN).putShort((short) 0x0800).put((byte) 2).put((byte) 0).array());
        attr(attrs, 3 | 0x4000, ByteBuffer.allocate(16).order(ByteOrder.BIG_ENDIAN).putLong(sec).putLong(usec).array());
        attr(attrs, 9, payload);
        byte[] p = prefix.getBytes(StandardCharsets.US_ASCII);
        byte[] z = new byte[p.length + 1];
        System.arraycopy(p, 0, z, 0, p.length);
        attr(attrs, 10, z);
        byte[] body = attrs.toByteArray();
        int len = 16 + 4 + body.length;
        ByteBuffer m = ByteBuffer.allocate(len).order(ByteOrder.nativeOrder());
        m.putInt(len).putShort((short) (4 << 8)).putShort((short) 0).putInt(0).putInt(0);
        m.put((byte) 2).put((byte) 0).order(ByteOrder.BIG_ENDIAN).putShort((short) 7731).order(ByteOrder.nativeOrder());
        m.put(body);
        return m.array();
    }

    private static void attr(ByteArrayOutputStream out, int type, byte[] value) {
        ByteBuffer h = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putShort((short) (4 + value.length)).putShort((short) type);
        out.writeBytes(h.array());
        out.writeBytes(value);
        out.writeBytes(new byte[NflogMessages.align(value.length) - value.length]);
    }

    @Test
    void aPacketMessageGivesPrefixPayloadAndTime() {
        byte[] one = packetMessage("npm:D:I:3", ipv4Syn(), 1_700_000_000L, 250_000L);
        byte[] two = packetMessage("npm:D:E:4", ipv6UdpWithHopByHop(), 1_700_000_001L, 0L);
        byte[] datagram = new byte[one.length + two.length + 10];
        System.arraycopy(one, 0, datagram, 0, one.length);
        System.arraycopy(two, 0, datagram, one.length, two.length);

        NflogMessages.Batch batch = NflogMessages.parse(datagram, one.length + two.length);
        assertThat(batch.packets()).hasSize(2);
        NflogMessages.Packet p = batch.packets().get(0);
        assertThat(p.prefix()).isEqualTo("npm:D:I:3");
        assertThat(p.timestamp()).isEqualTo(Instant.ofEpochSecond(1_700_000_000L, 250_000_000L));
        assertThat(PacketHeader.parse(p.payload())).isEqualTo(
                new PacketHeader(IpAddress.parse("10.99.0.1"), IpAddress.parse("10.99.0.2"), 6, 5201, 60));
        assertThat(PacketHeader.parse(batch.packets().get(1).payload())).isEqualTo(
                new PacketHeader(IpAddress.parse("fd99::1"), IpAddress.parse("fd99::2"), 17, 53, 56));
    }

    @Test
    void anAcknowledgementIsReadBySequence() {
        ByteBuffer m = ByteBuffer.allocate(36).order(ByteOrder.nativeOrder());
        m.putInt(36).putShort((short) 2).putShort((short) 0).putInt(7).putInt(0).putInt(-16);
        NflogMessages.Batch batch = NflogMessages.parse(m.array(), 36);
        assertThat(batch.packets()).isEmpty();
        assertThat(batch.acks()).singleElement().satisfies(a -> assertThat(a).containsExactly(7, -16));
    }

    @Test
    void aConfigurationRequestIsLaidOutAsTheKernelReadsIt() {
        ByteBuffer b = ByteBuffer.wrap(NflogMessages.command(5, 0, 7731, NflogMessages.CMD_BIND)).order(ByteOrder.nativeOrder());
        assertThat(b.getInt(0)).isEqualTo(28);
        assertThat(b.getShort(4)).isEqualTo((short) 0x0401); // NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_CONFIG
        assertThat(b.getShort(6)).isEqualTo((short) 5); // NLM_F_REQUEST | NLM_F_ACK
        assertThat(b.getInt(8)).isEqualTo(5);
        assertThat(b.order(ByteOrder.BIG_ENDIAN).getShort(18)).as("the group, in network order").isEqualTo((short) 7731);
        assertThat(b.order(ByteOrder.nativeOrder()).getShort(20)).isEqualTo((short) 5);
        assertThat(b.getShort(22)).isEqualTo((short) 1); // NFULA_CFG_CMD
        assertThat(b.get(24)).isEqualTo(NflogMessages.CMD_BIND);

        ByteBuffer mode = ByteBuffer.wrap(NflogMessages.copyPacket(6, 7731, 128));
        assertThat(mode.order(ByteOrder.BIG_ENDIAN).getInt(24)).as("copy range, network order").isEqualTo(128);
        assertThat(mode.get(28)).isEqualTo(NflogMessages.COPY_PACKET);
    }

    @Test
    void truncatedOrForeignInputIsRefusedClearly() {
        byte[] m = packetMessage("npm:D:I:3", ipv4Syn(), 0, 0);
        assertThatThrownBy(() -> NflogMessages.parse(m, m.length - 4)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("runs past").hasMessageContaining("length");
        assertThatThrownBy(() -> PacketHeader.parse(new byte[] {0x45, 0})).hasMessageContaining("IPv4 header needs 20 bytes");
        assertThatThrownBy(() -> PacketHeader.parse(new byte[] {0x20})).hasMessageContaining("version 2");
    }
}
