package io.npmagent.dataplane.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class IpAddressTest {

    @Nested
    class Ipv4 {

        @ParameterizedTest
        @ValueSource(strings = {"0.0.0.0", "10.0.0.1", "192.168.1.255", "255.255.255.255", "1.2.3.4"})
        void formatsBackToTheTextItWasParsedFrom(String text) {
            assertThat(IpAddress.parse(text).toString()).isEqualTo(text);
        }

        @Test
        void parsesToThe32BitValueInNetworkOrder() {
            IpAddress ip = IpAddress.parse("10.1.2.3");

            assertThat(ip.v6()).isFalse();
            assertThat(ip.bitLength()).isEqualTo(32);
            assertThat(ip).isEqualTo(IpAddress.v4(0x0a010203));
            assertThat(ip.lo()).isEqualTo(0x0a010203L);
            assertThat(ip.hi()).isZero();
        }

        @Test
        void highAddressesAreUnsignedNotNegative() {
            IpAddress ip = IpAddress.v4(0xc8000001);

            assertThat(ip.lo()).isEqualTo(0xc8000001L);
            assertThat(ip).hasToString("200.0.0.1");
        }

        @ParameterizedTest
        @CsvSource({
            "010.001.0.1, 10.1.0.1",
            "000.000.000.000, 0.0.0.0",
            "192.168.001.010, 192.168.1.10",
            "0010.0.0.01, 10.0.0.1",
        })
        void leadingZerosAreDecimalAsKubernetesParseIpSloppy(String sloppy, String canonical) {
            assertThat(IpAddress.parse(sloppy)).isEqualTo(IpAddress.parse(canonical));
            assertThat(IpAddress.parse(sloppy)).hasToString(canonical);
        }

        @ParameterizedTest
        @ValueSource(strings = {
            "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.256", "1.2.3.4 ", " 1.2.3.4", "a.b.c.d", "1..2.3",
            "1.2.3.4/8", "1.2.3.", ".1.2.3", "1.2.3.-4", "+1.2.3.4", "1.2.3.0x4",
            // non-ASCII digits (Arabic-Indic three, fullwidth one) are not digits to the API server
            "1.2.3.\u0663", "\uff11.2.3.4",
        })
        void rejectsMalformedIpv4(String text) {
            assertThatIllegalArgumentException().isThrownBy(() -> IpAddress.parse(text));
        }

        @Test
        void rejectsNull() {
            assertThatIllegalArgumentException().isThrownBy(() -> IpAddress.parse(null));
        }

        @ParameterizedTest
        @ValueSource(strings = {"example.com", "localhost", "kubernetes.default.svc", "a"})
        void rejectsHostnamesWithoutResolvingThem(String hostname) {
            // "localhost" would resolve to 127.0.0.1 through InetAddress; a literal parser must refuse it.
            assertThatIllegalArgumentException()
                    .isThrownBy(() -> IpAddress.parse(hostname))
                    .withMessageContaining(hostname);
        }

        @Test
        void constructorRejectsValuesWiderThan32Bits() {
            assertThatIllegalArgumentException().isThrownBy(() -> new IpAddress(false, 0, 1L << 32));
            assertThatIllegalArgumentException().isThrownBy(() -> new IpAddress(false, 1, 0));
        }
    }

    @Nested
    class Ipv6 {

        @Test
        void parsesTheUnspecifiedAddress() {
            IpAddress ip = IpAddress.parse("::");

            assertThat(ip).isEqualTo(IpAddress.v6(0, 0));
            assertThat(ip.v6()).isTrue();
            assertThat(ip.bitLength()).isEqualTo(128);
            assertThat(ip).hasToString("::");
        }

        @Test
        void parsesLoopback() {
            assertThat(IpAddress.parse("::1")).isEqualTo(IpAddress.v6(0, 1));
            assertThat(IpAddress.parse("::1")).hasToString("::1");
        }

        @Test
        void parsesDocumentationAddress() {
            assertThat(IpAddress.parse("2001:db8::1")).isEqualTo(IpAddress.v6(0x20010db800000000L, 1));
        }

        @Test
        void parsesAllEightGroupsWritten() {
            IpAddress ip = IpAddress.parse("2001:0db8:0001:0002:0003:0004:0005:0006");

            assertThat(ip).isEqualTo(IpAddress.v6(0x20010db800010002L, 0x0003000400050006L));
            assertThat(ip).hasToString("2001:db8:1:2:3:4:5:6");
        }

        @Test
        void parsesEmbeddedIpv4InTheLast32Bits() {
            assertThat(IpAddress.parse("::ffff:10.0.0.1")).isEqualTo(IpAddress.v6(0, 0x0000ffff0a000001L));
            assertThat(IpAddress.parse("1:2:3:4:5:6:1.2.3.4")).isEqualTo(IpAddress.parse("1:2:3:4:5:6:102:304"));
        }

        @Test
        void embeddedIpv4IsAnIpv6AddressNotTheIpv4One() {
            assertThat(IpAddress.parse("::ffff:10.0.0.1")).isNotEqualTo(IpAddress.parse("10.0.0.1"));
        }

        @Test
        void acceptsUpperCaseHexAndPrintsLowerCase() {
            IpAddress ip = IpAddress.parse("2001:DB8::ABCD");

            assertThat(ip).isEqualTo(IpAddress.parse("2001:db8::abcd"));
            assertThat(ip).hasToString("2001:db8::abcd");
        }

        @ParameterizedTest
        @CsvSource({
            // longest zero run is compressed
            "2001:db8:0:0:1:0:0:0, 2001:db8:0:0:1::",
            "2001:0:0:1:0:0:0:1, 2001:0:0:1::1",
            // on a tie the first run is compressed
            "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
            "1:0:0:2:0:0:3:4, 1::2:0:0:3:4",
            // a single zero group is written as 0, never ::
            "2001:db8:0:1:1:1:1:1, 2001:db8:0:1:1:1:1:1",
            "0:1:2:3:4:5:6:7, 0:1:2:3:4:5:6:7",
            "1:2:3:4:5:6:7:0, 1:2:3:4:5:6:7:0",
            // runs at either end
            "0:0:0:0:0:0:0:1, ::1",
            "1:0:0:0:0:0:0:0, 1::",
            "0:0:1:0:0:0:0:0, 0:0:1::",
            // leading zeros within a group are dropped
            "2001:0db8:00a0:0000:0000:0000:0000:0001, 2001:db8:a0::1",
        })
        void formatsPerRfc5952(String written, String canonical) {
            assertThat(IpAddress.parse(written)).hasToString(canonical);
            assertThat(IpAddress.parse(canonical)).isEqualTo(IpAddress.parse(written));
        }

        @ParameterizedTest
        @ValueSource(strings = {
            ":::", "1::2::3", "12345::", "1:2:3:4:5:6:7:8:9", ":1:2", "1:2:", "fe80::1%eth0",
            "1:2:3:4:5:6:7", "1::2:3:4:5:6:7:8", "::1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8::", "g::1", "::1 ",
            "[::1]", "1:2:3:4:5:6:7:1.2.3.4", "::1.2.3", "::1.2.3.4:5", "::256.0.0.1", "::-1",
            // non-ASCII hex digits (fullwidth one, fullwidth A, Arabic-Indic three)
            "::\uff11", "2001:db8::\uff21", "::\u0663",
        })
        void rejectsMalformedIpv6(String text) {
            assertThatIllegalArgumentException().isThrownBy(() -> IpAddress.parse(text));
        }
    }

    @Nested
    class Bits {

        @Test
        void bitZeroIsTheMostSignificant() {
            IpAddress ip = IpAddress.parse("128.0.0.1");

            assertThat(ip.bit(0)).isTrue();
            assertThat(ip.bit(1)).isFalse();
            assertThat(ip.bit(30)).isFalse();
            assertThat(ip.bit(31)).isTrue();
        }

        @Test
        void ipv6BitsCrossTheHalves() {
            IpAddress ip = IpAddress.parse("8000:0:0:1:0:0:0:1");

            assertThat(ip.bit(0)).isTrue();
            assertThat(ip.bit(1)).isFalse();
            assertThat(ip.bit(63)).isTrue(); // last bit of the high half
            assertThat(ip.bit(64)).isFalse();
            assertThat(ip.bit(127)).isTrue();
        }

        @Test
        void bitsSpellTheAddress() {
            IpAddress ip = IpAddress.parse("10.244.1.10");
            StringBuilder bits = new StringBuilder();
            for (int i = 0; i < 32; i++) {
                bits.append(ip.bit(i) ? '1' : '0');
            }

            assertThat(bits).hasToString("00001010" + "11110100" + "00000001" + "00001010");
        }
    }

    @Nested
    class Masking {

        @ParameterizedTest
        @CsvSource({
            "10.244.1.10, 0, 0.0.0.0",
            "10.244.1.10, 4, 0.0.0.0",
            "10.244.1.10, 8, 10.0.0.0",
            "10.244.1.10, 23, 10.244.0.0",
            "10.244.1.10, 31, 10.244.1.10",
            "10.244.1.11, 31, 10.244.1.10",
            "255.255.255.255, 32, 255.255.255.255",
            "255.255.255.255, 1, 128.0.0.0",
        })
        void ipv4ClearsBitsFromThePrefixLengthOn(String ip, int prefix, String expected) {
            assertThat(IpAddress.parse(ip).masked(prefix)).isEqualTo(IpAddress.parse(expected));
        }

        @ParameterizedTest
        @CsvSource({
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff, 0, ::",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff, 1, 8000::",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff, 63, ffff:ffff:ffff:fffe::",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff, 64, ffff:ffff:ffff:ffff::",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff, 65, ffff:ffff:ffff:ffff:8000::",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff, 127, ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff, 128, ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            "2001:db8::1, 32, 2001:db8::",
        })
        void ipv6ClearsBitsFromThePrefixLengthOn(String ip, int prefix, String expected) {
            assertThat(IpAddress.parse(ip).masked(prefix)).isEqualTo(IpAddress.parse(expected));
        }

        @Test
        void rejectsPrefixLengthsOutsideTheFamily() {
            assertThatIllegalArgumentException().isThrownBy(() -> IpAddress.parse("10.0.0.1").masked(33));
            assertThatIllegalArgumentException().isThrownBy(() -> IpAddress.parse("10.0.0.1").masked(-1));
            assertThatIllegalArgumentException().isThrownBy(() -> IpAddress.parse("::1").masked(129));
        }
    }

    @Nested
    class Ordering {

        @Test
        void ipv4SortsBeforeIpv6() {
            assertThat(IpAddress.parse("255.255.255.255")).isLessThan(IpAddress.parse("::"));
            assertThat(IpAddress.parse("::")).isGreaterThan(IpAddress.parse("0.0.0.0"));
        }

        @Test
        void comparesUnsigned() {
            assertThat(IpAddress.parse("200.0.0.1")).isGreaterThan(IpAddress.parse("10.0.0.1"));
            assertThat(IpAddress.parse("ffff::")).isGreaterThan(IpAddress.parse("1::"));
            assertThat(IpAddress.parse("::8000:0:0:0")).isGreaterThan(IpAddress.parse("::1"));
            assertThat(IpAddress.parse("1::")).isGreaterThan(IpAddress.parse("::ffff:ffff:ffff:ffff"));
        }

        @Test
        void sortsAMixedListIntoFamilyThenNumericOrder() {
            List<IpAddress> ips = new ArrayList<>();
            for (String s : List.of("ffff::", "200.0.0.1", "::1", "10.0.0.1", "1::", "9.255.255.255")) {
                ips.add(IpAddress.parse(s));
            }
            Collections.sort(ips);

            assertThat(ips).extracting(IpAddress::toString)
                    .containsExactly("9.255.255.255", "10.0.0.1", "200.0.0.1", "::1", "1::", "ffff::");
        }

        @Test
        void equalAddressesCompareAsZero() {
            assertThat(IpAddress.parse("2001:db8::1").compareTo(IpAddress.parse("2001:DB8:0::1"))).isZero();
        }
    }

    @Nested
    class Bytes {

        @Test
        void ipv4IsFourBytesInNetworkOrder() {
            assertThat(IpAddress.parse("10.244.1.200").toBytes()).containsExactly(10, 244, 1, 200);
        }

        @Test
        void ipv6IsSixteenBytesInNetworkOrder() {
            assertThat(IpAddress.parse("2001:db8::ff01").toBytes()).containsExactly(
                    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0x01);
        }

        @Test
        void ipv6BytesCrossTheHalves() {
            byte[] bytes = IpAddress.v6(0x0102030405060708L, 0x090a0b0c0d0e0f10L).toBytes();

            assertThat(bytes).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
        }
    }

    @Property(tries = 2000)
    void everyIpv4AddressSurvivesFormatAndParse(@ForAll int bits) {
        IpAddress ip = IpAddress.v4(bits);

        assertThat(IpAddress.parse(ip.toString())).isEqualTo(ip);
    }

    @Property(tries = 2000)
    void everyIpv6AddressSurvivesFormatAndParse(@ForAll long hi, @ForAll long lo) {
        IpAddress ip = IpAddress.v6(hi, lo);

        assertThat(IpAddress.parse(ip.toString())).isEqualTo(ip);
    }

    @Property(tries = 2000)
    void ipv6WithZeroRunsSurvivesFormatAndParse(@ForAll long hi, @ForAll long lo, @ForAll int zeroMask) {
        // Random longs rarely hold zero groups, so clear a random subset of the eight groups to exercise "::".
        long h = hi;
        long l = lo;
        for (int g = 0; g < 4; g++) {
            if ((zeroMask >>> g & 1) == 1) {
                h &= ~(0xffffL << (48 - 16 * g));
            }
            if ((zeroMask >>> (4 + g) & 1) == 1) {
                l &= ~(0xffffL << (48 - 16 * g));
            }
        }
        IpAddress ip = IpAddress.v6(h, l);

        assertThat(IpAddress.parse(ip.toString())).isEqualTo(ip);
        assertThat(ip.toString()).doesNotContain(":::").isEqualTo(ip.toString().toLowerCase());
    }
}
