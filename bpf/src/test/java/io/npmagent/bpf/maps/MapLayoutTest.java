package io.npmagent.bpf.maps;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.dataplane.model.Cidr;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.bandwidth.BandwidthSettings;
import io.npmagent.dataplane.bandwidth.FlowControl;
import java.time.Duration;
import java.util.HexFormat;
import io.npmagent.dataplane.flow.DropReason;
import io.npmagent.dataplane.flow.FlowSettings;
import io.npmagent.dataplane.flow.FlowVerdict;
import io.npmagent.dataplane.model.Direction;
import org.junit.jupiter.api.Test;

/**
 * The exact bytes of each struct the programs share with Java (golden), and the round trip. The
 * struct layouts themselves are checked against the compiled object's BTF in {@link BtfLayoutTest}.
 */
class MapLayoutTest {
    private static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }

    @Test
    void state() {
        assertThat(hex(StateMap.key())).isEqualTo("00000000");
        assertThat(hex(StateMap.value(1))).isEqualTo("01000000");
        assertThat(StateMap.version(StateMap.value(3))).isEqualTo(1);
    }

    @Test
    void endpoint() {
        EndpointMap.Key k = new EndpointMap.Key(0x0102, 1);
        assertThat(hex(k.encode())).isEqualTo("02010000" + "01" + "000000");
        assertThat(EndpointMap.Key.decode(k.encode())).isEqualTo(k);
        EndpointMap.Value v = new EndpointMap.Value(7, true, false, 50_000_000L, 0x0102030405L);
        assertThat(hex(v.encode())).isEqualTo("07000000" + "01" + "00" + "0000" + "80f0fa0200000000" + "0504030201000000" + "00".repeat(16)
                + "00".repeat(16) + "00".repeat(8));
        assertThat(EndpointMap.Value.decode(v.encode())).isEqualTo(v);
        EndpointMap.Value bbr = new EndpointMap.Value(7, false, false, 0, 0, "bbr");
        assertThat(hex(bbr.encode()).substring(48, 80)).isEqualTo("626272" + "00".repeat(13));
        assertThat(EndpointMap.Value.decode(bbr.encode())).isEqualTo(bbr);
        EndpointMap.Value tiers = new EndpointMap.Value(7, EndpointMap.Judged.MISS_ALLOWED, EndpointMap.Judged.MISS_DENIED, 0, 0, null,
                new EndpointMap.Tiers(0x40000001, 0, 0x40000002, 0x40000003));
        assertThat(hex(tiers.encode()).substring(8, 12)).as("judged: 2 a miss allowed, 1 denied (isolated, as before tiers)").isEqualTo("0201");
        assertThat(hex(tiers.encode()).substring(80, 112)).as("tiers[direction][admin, baseline]")
                .isEqualTo("01000040" + "00000000" + "02000040" + "03000040");
        EndpointMap.Value isolated = new EndpointMap.Value(7, EndpointMap.Judged.MISS_DENIED, EndpointMap.Judged.OPEN, 0, 0, null,
                EndpointMap.Tiers.NONE, new EndpointMap.Isolation(0x0102, 0));
        assertThat(hex(isolated.encode()).substring(112)).as("isolation[direction]: a default deny's attribution number")
                .isEqualTo("02010000" + "00000000");
        assertThat(EndpointMap.Value.decode(isolated.encode())).isEqualTo(isolated);
        assertThat(EndpointMap.Value.decode(tiers.encode())).isEqualTo(tiers);
        assertThat(EndpointMap.Value.decode(new EndpointMap.Value(7, false, true, 0, 0).encode()).egress()).isEqualTo(EndpointMap.Judged.MISS_DENIED);
        assertThatThrownBy(() -> new EndpointMap.Value(7, false, false, 0, 0, "a".repeat(16))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new EndpointMap.Value(7, false, false, 0, 0, "bb r")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void localAddress() {
        LocalAddressMap.Key v4 = new LocalAddressMap.Key(1, IpAddress.parse("10.244.0.7"));
        assertThat(hex(v4.encode())).isEqualTo("01" + "04" + "0000" + "0af40007" + "00".repeat(12));
        assertThat(LocalAddressMap.Key.decode(v4.encode())).isEqualTo(v4);
        LocalAddressMap.Key v6 = new LocalAddressMap.Key(0, IpAddress.parse("fd00::7"));
        assertThat(hex(v6.encode())).isEqualTo("00" + "06" + "0000" + "fd00" + "0000".repeat(6) + "0007");
        assertThat(LocalAddressMap.Key.decode(v6.encode())).isEqualTo(v6);
        assertThat(hex(LocalAddressMap.value(0x0102))).isEqualTo("02010000");
    }

    @Test
    void bandwidth() {
        assertThat(hex(BandwidthConfigMap.value(new BandwidthSettings(Duration.ofMillis(2), Duration.ofNanos(258), Duration.ofSeconds(1), false,
                FlowControl.BACK_PRESSURE))))
                .isEqualTo("80841e0000000000" + "0201000000000000" + "00ca9a3b00000000" + "02000000" + "00000000");
        byte[] twoCpus = new byte[2 * BandwidthStatsMap.VALUE_SIZE];
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(twoCpus).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (int cpu = 0; cpu < 2; cpu++) {
            for (int field = 0; field < 8; field++) {
                b.putLong(cpu * BandwidthStatsMap.VALUE_SIZE + 8 * field, (field + 1) * (cpu + 1));
            }
        }
        assertThat(BandwidthStatsMap.Value.sumPerCpu(twoCpus)).isEqualTo(new BandwidthStatsMap.Value(3, 6, 9, 12, 15, 18, 21, 24));
    }

    @Test
    void ipcache() {
        IpcacheMap.Key v4 = new IpcacheMap.Key(1, Cidr.parse("10.1.2.0/24"));
        assertThat(hex(v4.encode())).isEqualTo("38000000" + "01" + "04" + "0000" + "0a010200" + "00".repeat(12));
        assertThat(IpcacheMap.Key.decode(v4.encode())).isEqualTo(v4);
        IpcacheMap.Key v6 = new IpcacheMap.Key(0, Cidr.host(IpAddress.parse("fd00::1")));
        assertThat(hex(v6.encode())).isEqualTo("a0000000" + "00" + "06" + "0000" + "fd00" + "0000".repeat(6) + "0001");
        assertThat(IpcacheMap.Key.decode(v6.encode())).isEqualTo(v6);
        IpcacheMap.Value inAtom = new IpcacheMap.Value(0x20000001, 0x40000002);
        assertThat(hex(inAtom.encode())).isEqualTo("01000020" + "02000040");
        assertThat(IpcacheMap.Value.decode(inAtom.encode())).isEqualTo(inAtom);
        assertThat(hex(IpcacheMap.Value.of(256).encode())).as("no atom: NPM_ATOM_NONE").isEqualTo("00010000" + "00000000");
    }

    @Test
    void policy() {
        PolicyMap.Key tcp = PolicyMap.Key.ports(1, 0, 5, 300, 6, 0x1f40, 12);
        assertThat(tcp.prefixLength()).isEqualTo(124);
        assertThat(hex(tcp.encode())).isEqualTo("7c000000" + "01" + "00" + "0000" + "05000000" + "2c010000" + "06" + "00" + "1f40");
        assertThat(PolicyMap.Key.decode(tcp.encode())).isEqualTo(tcp);
        PolicyMap.Key any = PolicyMap.Key.anyProtocol(0, 1, 5, -1);
        assertThat(hex(any.encode())).isEqualTo("60000000" + "00" + "01" + "0000" + "05000000" + "ffffffff" + "00" + "00" + "0000");
        assertThat(PolicyMap.Key.decode(any.encode())).isEqualTo(any);
        assertThat(hex(PolicyMap.value(PolicyMap.ALLOW))).as("what an agent before tiers wrote in every entry").isEqualTo("01000000");
        assertThat(hex(PolicyMap.value(PolicyMap.DENY))).isEqualTo("02000000");
        assertThat(PolicyMap.verdict(PolicyMap.value(PolicyMap.DENY))).isEqualTo(PolicyMap.DENY);
    }

    @Test
    void conntrack() {
        CtMap.Key k = new CtMap.Key(3, 17, 40000, 53, IpAddress.parse("10.0.0.1"), IpAddress.parse("10.0.0.2"));
        assertThat(hex(k.encode())).isEqualTo("03000000" + "04" + "11" + "9c40" + "0035" + "0000"
                + "0a000001" + "00".repeat(12) + "0a000002" + "00".repeat(12));
        assertThat(CtMap.Key.decode(k.encode())).isEqualTo(k);
        CtMap.Value v = new CtMap.Value(0x0102030405060708L, 1, 5);
        assertThat(hex(v.encode())).isEqualTo("0807060504030201" + "01" + "05" + "00".repeat(6));
        assertThat(CtMap.Value.decode(v.encode())).isEqualTo(v);
    }

    @Test
    void policyValues() {
        assertThat(hex(PolicyMap.value(PolicyMap.ALLOW))).as("what agents before tiers wrote").isEqualTo("01000000");
        int denied = PolicyMap.packed(PolicyMap.DENY, 0x0102);
        assertThat(hex(PolicyMap.value(denied))).as("verdict in the low two bits, the number above").isEqualTo("0a040000");
        assertThat(PolicyMap.verdictOf(denied)).isEqualTo(PolicyMap.DENY);
        assertThat(PolicyMap.refOf(denied)).isEqualTo(0x0102);
        assertThatThrownBy(() -> PolicyMap.packed(PolicyMap.DENY, PolicyMap.MAX_REF + 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void flowVerdicts() {
        FlowSettings s = new FlowSettings(true, false, 1000, java.time.Duration.ofSeconds(5));
        assertThat(hex(VerdictMaps.config(s))).isEqualTo("01000000" + "e8030000" + "00f2052a01000000");
        assertThat(hex(VerdictMaps.config(FlowSettings.OFF)).substring(0, 8)).as("nothing reported").isEqualTo("00000000");
        String key = "05000000" + "00" + "02" + "01" + "06" + "04" + "00" + "1451" + "0a000002" + "00".repeat(12);
        String record = "0100000000000000" + "0200000000000000" + "e803000000000000" + "c0d4010000000000" + "0200000000000000"
                + "07000000" + "02" + "01" + "0035" + "0a000001" + "00".repeat(12) + "0a000009" + "00".repeat(12) + "0a60000a" + "00".repeat(12);
        VerdictMaps.Event e = VerdictMaps.Event.decode(HexFormat.of().parseHex(key + "00000000" + record));
        assertThat(e.key()).isEqualTo(new VerdictMaps.Key(5, Direction.INGRESS, FlowVerdict.DENIED, DropReason.POLICY, 6, false, 5201,
                IpAddress.parse("10.0.0.2")));
        assertThat(e.record()).isEqualTo(new VerdictMaps.Record(1, 2, 1000, 120_000, 2, 7, "netfilter", IpAddress.parse("10.0.0.1"),
                IpAddress.parse("10.0.0.9"), IpAddress.parse("10.96.0.10"), 53));
        assertThat(VerdictMaps.EVENT_SIZE).isEqualTo(128);
    }

    @Test
    void drops() {
        assertThat(hex(new DropMap.Key(9, 1).encode())).isEqualTo("09000000" + "01" + "000000");
        byte[] twoCpus = HexFormat.of().parseHex("0200000000000000" + "6400000000000000" + "0300000000000000" + "c800000000000000");
        assertThat(DropMap.Value.sumPerCpu(twoCpus)).isEqualTo(new DropMap.Value(5, 300));
    }
}
