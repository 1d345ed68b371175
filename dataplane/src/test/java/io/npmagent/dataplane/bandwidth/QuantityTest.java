package io.npmagent.dataplane.bandwidth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class QuantityTest {

    @ParameterizedTest
    @CsvSource({
            "1k, 1000", "1Ki, 1024", "100M, 100000000", "0.1M, 100000", "1.5Gi, 1610612736",
            "1e3, 1000", "1E3, 1000", "1E, 1000000000000000000", "1e-3, 0.001", "1000001m, 1000.001",
            "+5M, 5000000", "-5M, -5000000", "5.M, 5000000", ".5k, 500", "2Pi, 2251799813685248",
            "12.5e+2, 1250", "3Ei, 3458764513820540928", "7, 7", "0, 0"})
    void readsKubernetesQuantitiesExactly(String text, String exact) {
        assertThat(Quantity.parse(text)).isEqualByComparingTo(new BigDecimal(exact));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " 1M", "1M ", "1 M", "5MB", "1mi", "1KI", "M", "1e", "1e1.5", "1..0", "0x10", "1_000", "1,5M", "١M", "1e200000"})
    void refusesWhatIsNotAQuantity(String text) {
        assertThatThrownBy(() -> Quantity.parse(text)).isInstanceOf(IllegalArgumentException.class);
    }

    @Property
    void decimalSuffixesScaleByPowersOfTen(@ForAll @LongRange(min = 0, max = 1_000_000_000_000L) long n,
            @ForAll @IntRange(min = 0, max = 6) int fractionDigits) {
        BigDecimal number = BigDecimal.valueOf(n, fractionDigits);
        String text = number.toPlainString();
        assertThat(Quantity.parse(text + "k")).isEqualByComparingTo(number.scaleByPowerOfTen(3));
        assertThat(Quantity.parse(text + "M")).isEqualByComparingTo(number.scaleByPowerOfTen(6));
        assertThat(Quantity.parse(text + "e9")).isEqualByComparingTo(number.scaleByPowerOfTen(9));
        assertThat(Quantity.parse(text + "m")).isEqualByComparingTo(number.scaleByPowerOfTen(-3));
    }

    @Property
    void binarySuffixesMultiplyByPowersOfTwo(@ForAll @LongRange(min = 0, max = 1_000_000_000L) long n) {
        BigDecimal number = BigDecimal.valueOf(n);
        assertThat(Quantity.parse(n + "Ki")).isEqualByComparingTo(number.multiply(BigDecimal.valueOf(1024)));
        assertThat(Quantity.parse(n + "Gi")).isEqualByComparingTo(number.multiply(BigDecimal.valueOf(1L << 30)));
    }
}
