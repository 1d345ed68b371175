package io.npmagent.dataplane.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class CidrTest {

    @ParameterizedTest
    @CsvSource({
        "10.244.1.10/4, 0.0.0.0/4",
        "10.244.1.10/16, 10.244.0.0/16",
        "10.244.1.10/32, 10.244.1.10/32",
        "10.244.1.10/0, 0.0.0.0/0",
        "2001:db8::1/32, 2001:db8::/32",
        "2001:db8::1/128, 2001:db8::1/128",
        "2001:db8::1/0, ::/0",
        "2001:DB8:0:0::/48, 2001:db8::/48",
    })
    void parseClearsHostBitsLikeGoParseCidr(String written, String canonical) {
        Cidr cidr = Cidr.parse(written);

        assertThat(cidr).hasToString(canonical);
        assertThat(cidr).isEqualTo(Cidr.parse(canonical));
    }

    @Test
    void parsedPrefixHasNetworkAndLength() {
        Cidr cidr = Cidr.parse("10.244.1.10/16");

        assertThat(cidr.network()).isEqualTo(IpAddress.parse("10.244.0.0"));
        assertThat(cidr.prefixLength()).isEqualTo(16);
        assertThat(cidr.v6()).isFalse();
        assertThat(Cidr.parse("::/0").v6()).isTrue();
    }

    @Test
    void constructorAlsoNormalizes() {
        assertThat(new Cidr(IpAddress.parse("192.168.7.9"), 24)).isEqualTo(Cidr.parse("192.168.7.0/24"));
    }

    @Test
    void hostIsTheFullLengthPrefix() {
        assertThat(Cidr.host(IpAddress.parse("10.0.0.7"))).isEqualTo(Cidr.parse("10.0.0.7/32"));
        assertThat(Cidr.host(IpAddress.parse("::7"))).isEqualTo(Cidr.parse("::7/128"));
    }

    @Test
    void sloppyLeadingZerosInTheAddressAreAccepted() {
        assertThat(Cidr.parse("010.000.0.0/8")).isEqualTo(Cidr.parse("10.0.0.0/8"));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "10.0.0.0", "2001:db8::", "10.0.0.0/", "/8", "10.0.0.0/33", "::/129", "10.0.0.0/-1", "10.0.0.0/08x",
        "10.0.0.0/+8", "10.0.0.0/ 8", "10.0.0.0/8 ", "10.0.0.0/8/8", "10.0.0.256/8", "garbage/8", "example.com/32",
        "fe80::1%eth0/64", "", "1.2.3/24",
    })
    void rejectsMalformedCidrs(String text) {
        assertThatIllegalArgumentException().isThrownBy(() -> Cidr.parse(text));
    }

    @Test
    void rejectsNull() {
        assertThatIllegalArgumentException().isThrownBy(() -> Cidr.parse(null));
    }

    @Test
    void constructorRejectsPrefixLengthsOutsideTheFamily() {
        assertThatIllegalArgumentException().isThrownBy(() -> new Cidr(IpAddress.parse("10.0.0.0"), 33));
        assertThatIllegalArgumentException().isThrownBy(() -> new Cidr(IpAddress.parse("::"), 129));
        assertThatIllegalArgumentException().isThrownBy(() -> new Cidr(IpAddress.parse("::"), -1));
    }

    @Test
    void v6PrefixLengthOf33To128IsFine() {
        assertThat(Cidr.parse("2001:db8::/64").prefixLength()).isEqualTo(64);
        assertThat(Cidr.parse("2001:db8::/100").prefixLength()).isEqualTo(100);
    }

    @Test
    void containsAddressesInsideThePrefixOnly() {
        Cidr cidr = Cidr.parse("10.244.0.0/16");

        assertThat(cidr.contains(IpAddress.parse("10.244.0.0"))).isTrue();
        assertThat(cidr.contains(IpAddress.parse("10.244.255.255"))).isTrue();
        assertThat(cidr.contains(IpAddress.parse("10.245.0.0"))).isFalse();
        assertThat(cidr.contains(IpAddress.parse("10.243.255.255"))).isFalse();
    }

    @Test
    void zeroPrefixContainsEveryAddressOfItsFamily() {
        assertThat(Cidr.parse("0.0.0.0/0").contains(IpAddress.parse("255.255.255.255"))).isTrue();
        assertThat(Cidr.parse("::/0").contains(IpAddress.parse("ffff::1"))).isTrue();
    }

    @Test
    void containsIsFalseAcrossFamilies() {
        assertThat(Cidr.parse("0.0.0.0/0").contains(IpAddress.parse("::"))).isFalse();
        assertThat(Cidr.parse("::/0").contains(IpAddress.parse("0.0.0.0"))).isFalse();
        assertThat(Cidr.parse("::/96").contains(IpAddress.parse("10.0.0.1"))).isFalse();
        assertThat(Cidr.parse("::/0").contains(Cidr.parse("10.0.0.0/8"))).isFalse();
        assertThat(Cidr.parse("0.0.0.0/0").contains(Cidr.parse("::/128"))).isFalse();
    }

    @Test
    void containsANestedPrefix() {
        assertThat(Cidr.parse("10.0.0.0/8").contains(Cidr.parse("10.244.0.0/16"))).isTrue();
        assertThat(Cidr.parse("10.0.0.0/8").contains(Cidr.parse("10.255.255.255/32"))).isTrue();
        assertThat(Cidr.parse("2001:db8::/32").contains(Cidr.parse("2001:db8:1::/48"))).isTrue();
    }

    @Test
    void containsAnEqualPrefix() {
        assertThat(Cidr.parse("10.0.0.0/8").contains(Cidr.parse("10.1.2.3/8"))).isTrue();
    }

    @Test
    void doesNotContainADisjointPrefix() {
        assertThat(Cidr.parse("10.0.0.0/8").contains(Cidr.parse("11.0.0.0/16"))).isFalse();
        assertThat(Cidr.parse("2001:db8::/32").contains(Cidr.parse("2001:db9::/48"))).isFalse();
    }

    @Test
    void doesNotContainAWiderPrefixEvenWhenItsNetworkIsInside() {
        // 10.0.0.0/7 starts at 10.0.0.0 (inside 10/8) but also covers 11/8.
        assertThat(Cidr.parse("10.0.0.0/8").contains(Cidr.parse("10.0.0.0/7"))).isFalse();
        assertThat(Cidr.parse("10.0.0.0/8").contains(Cidr.parse("0.0.0.0/0"))).isFalse();
    }

    @Test
    void ordersByNetworkThenPrefixLength() {
        assertThat(Cidr.parse("10.0.0.0/8")).isLessThan(Cidr.parse("10.0.0.0/16"));
        assertThat(Cidr.parse("10.0.0.0/16")).isLessThan(Cidr.parse("10.1.0.0/16"));
        assertThat(Cidr.parse("200.0.0.0/8")).isLessThan(Cidr.parse("::/0"));
    }
}
