package io.npmagent.bpf.libbpf;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

class RtnetlinkTest {
    @Test
    void readsFourByteAttributesAfterTheHeaderAndSkipsTheOthers() {
        ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.nativeOrder());
        b.putInt(0x11111111).putInt(0x22222222).putInt(0x33333333).putInt(0x44444444); // an ifinfomsg's 16 bytes
        b.putShort((short) 8).putShort((short) Rtnetlink.IFLA_GSO_MAX_SIZE).putInt(65_536);
        b.putShort((short) 7).putShort((short) 3).put(new byte[] {'e', 't', 'h'}).put((byte) 0); // IFLA_IFNAME, padded to 8
        b.putShort((short) 8).putShort((short) (Rtnetlink.IFLA_LINK_NETNSID | 0x8000)).putInt(-1); // flag bits ignored; s32 -1
        b.putShort((short) 8).putShort((short) Rtnetlink.IFLA_GSO_IPV4_MAX_SIZE).putInt(196_608);
        b.putShort((short) 40).putShort((short) 99); // claims more than is there: parsing stops
        b.flip();
        assertThat(Rtnetlink.attributes(b, 16)).containsExactly(
                java.util.Map.entry(Rtnetlink.IFLA_GSO_MAX_SIZE, 65_536L),
                java.util.Map.entry(Rtnetlink.IFLA_LINK_NETNSID, 0xffffffffL),
                java.util.Map.entry(Rtnetlink.IFLA_GSO_IPV4_MAX_SIZE, 196_608L));
    }
}
