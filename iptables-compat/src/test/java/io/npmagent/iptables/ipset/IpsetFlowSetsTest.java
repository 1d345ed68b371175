package io.npmagent.iptables.ipset;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.iptables.flow.CountedFlow;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The flow sets' names and {@code ipset save} parsing, on output captured from ipset v7.17 on Linux 6.18. */
class IpsetFlowSetsTest {
    /** {@code ipset save} of a set made by {@code -j SET --add-set}: the element that made it counts its first packet. */
    private static final String SAVE_V4 = """
            create npm-flows-in4 hash:ip,port,ip family inet hashsize 1024 maxelem 65536 timeout 30 counters bucketsize 12 initval 0x9d80487f
            add npm-flows-in4 10.0.0.1,tcp:8080,10.0.0.3 timeout 30 packets 1 bytes 60
            add npm-flows-in4 10.0.0.1,udp:80,10.0.0.2 timeout 29 packets 1000 bytes 29000
            """;
    /** IPv6, protocols by their /etc/protocols name; ICMPv6 keyed by type (never added by the agent's rules). */
    private static final String SAVE_V6 = """
            create npm-flows-eg6 hash:ip,port,ip family inet6 hashsize 1024 maxelem 65536 timeout 30 counters bucketsize 12 initval 0x8bea57fc
            add npm-flows-eg6 fd00::1,sctp:80,fd00::2 timeout 29 packets 3 bytes 300
            add npm-flows-eg6 fd00::1,tcp:80,fd00::2 timeout 29 packets 0 bytes 0
            add npm-flows-eg6 fd00::1,gre:0,fd00::2 timeout 29 packets 2 bytes 100
            add npm-flows-eg6 fd00::1,ipv6-icmp:echo-request,fd00::2 timeout 29 packets 5 bytes 500
            add npm-flows-eg6 fd00::1,udplite:80,fd00::2 timeout 29 packets 1 bytes 9
            """;
    /** A set at its maxelem (2 here): the kernel refuses more ("Hash is full"). */
    private static final String SAVE_FULL = """
            create F4 hash:ip,port,ip family inet hashsize 1024 maxelem 2 timeout 30 counters bucketsize 12 initval 0x7c1aae3a
            add F4 10.0.0.1,tcp:8080,10.0.0.3 timeout 30 packets 0 bytes 0
            add F4 10.0.0.1,udp:80,10.0.0.2 timeout 29 packets 1000 bytes 29000
            """;

    @Test
    void readsEachElementsKeyAndCounters() {
        List<CountedFlow> out = new ArrayList<>();
        assertThat(IpsetFlowSets.parse(SAVE_V4, Direction.INGRESS, out)).as("not full").isFalse();
        assertThat(out).containsExactly(
                new CountedFlow(Direction.INGRESS, IpAddress.parse("10.0.0.1"), IpAddress.parse("10.0.0.3"), 6, 8080, 1, 60, null),
                new CountedFlow(Direction.INGRESS, IpAddress.parse("10.0.0.1"), IpAddress.parse("10.0.0.2"), 17, 80, 1000, 29000, null));
    }

    @Test
    void readsIpv6AndProtocolsByNameSkippingWhatHasNoPort() {
        List<CountedFlow> out = new ArrayList<>();
        IpsetFlowSets.parse(SAVE_V6, Direction.EGRESS, out);
        assertThat(out).extracting(CountedFlow::protocol, CountedFlow::port, CountedFlow::packets)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(132, 80, 3L), org.assertj.core.groups.Tuple.tuple(6, 80, 0L),
                        org.assertj.core.groups.Tuple.tuple(136, 80, 1L));
        assertThat(out).allMatch(f -> f.source().equals(IpAddress.parse("fd00::1")) && f.destination().equals(IpAddress.parse("fd00::2")));
    }

    @Test
    void aSetAtItsMaxelemIsFull() {
        List<CountedFlow> out = new ArrayList<>();
        assertThat(IpsetFlowSets.parse(SAVE_FULL, Direction.INGRESS, out)).isTrue();
        assertThat(out).hasSize(2);
    }

    @Test
    void skipsWhatItCannotReadAndKeepsTheRest() {
        String odd = """
                create npm-flows-in4 hash:ip,port,ip family inet hashsize 1024 maxelem 65536 timeout 30 counters
                add npm-flows-in4 10.0.0.1,tcp:8080,10.0.0.3 timeout 30
                add npm-flows-in4 10.0.0.1,tcp:99999,10.0.0.3 timeout 30 packets 1 bytes 1
                add npm-flows-in4 10.0.0.1,tcp:80 timeout 30 packets 1 bytes 1
                add npm-flows-in4 not-an-address,tcp:80,10.0.0.3 timeout 30 packets 1 bytes 1
                add npm-flows-in4 10.0.0.1,tcp:80,10.0.0.3 timeout 30 packets x bytes 1
                garbage
                add npm-flows-in4 10.0.0.1,tcp:81,10.0.0.3 timeout 30 packets 7 bytes 70 comment "later ipset"
                add npm-flows-in4 10.0.0.1,tcp:82,10.0.0.3 packets 8 bytes 80
                """;
        List<CountedFlow> out = new ArrayList<>();
        IpsetFlowSets.parse(odd, Direction.INGRESS, out);
        assertThat(out).extracting(CountedFlow::port, CountedFlow::packets)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(81, 7L), org.assertj.core.groups.Tuple.tuple(82, 8L));
    }

    @Test
    void namesAreTheAgentsAndNeverAHashedSets() {
        assertThat(IpsetFlowSets.names()).containsExactly("npm-flows-eg4", "npm-flows-eg6", "npm-flows-in4", "npm-flows-in6");
        assertThat(IpsetFlowSets.names()).allMatch(n -> n.length() <= 31 && IpsetFlowSets.isFlowSet(n));
        assertThat(IpsetFlowSets.isFlowSet("npm-c4-sbbgvkrhtq36mn2usbaw")).isFalse();
        assertThat(IpsetFlowSets.isFlowSet("npm-flows-in4x")).isFalse();
        assertThat(IpsetFlowSets.present("npm-flows-in4\nnpm-s4-abc\ncreate npm-flows-eg6 hash:ip,port,ip\nadd npm-flows-in6 x\n"))
                .isEqualTo(Set.of("npm-flows-in4", "npm-flows-eg6"));
    }

    @Test
    void createsOnlyTheSetsNotThere() {
        assertThat(IpsetFlowSets.createInput(IpsetFlowSets.names())).isEmpty();
        assertThat(IpsetFlowSets.createInput(Set.of("npm-flows-in4", "npm-flows-eg4", "npm-flows-eg6")))
                .isEqualTo("create npm-flows-in6 hash:ip,port,ip family inet6 timeout 30 counters maxelem 65536 -exist\n");
    }
}
