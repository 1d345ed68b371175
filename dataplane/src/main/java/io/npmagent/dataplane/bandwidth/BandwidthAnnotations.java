package io.npmagent.dataplane.bandwidth;

import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.Direction;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.ValidationError;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads {@code kubernetes.io/egress-bandwidth} and {@code kubernetes.io/ingress-bandwidth} as kubelet
 * does: a quantity in bits per second, rounded up to a whole bit, between 1 kbit/s and 1 Pbit/s. A
 * value outside that, or not a quantity, is an error naming the pod, the annotation and the value;
 * that direction is then unlimited (kubelet would refuse the whole pod, but its policies must still
 * apply here, and a limit we cannot read has no rate to enforce).
 */
public final class BandwidthAnnotations {
    public static final String EGRESS = "kubernetes.io/egress-bandwidth";
    public static final String INGRESS = "kubernetes.io/ingress-bandwidth";
    static final BigDecimal MIN = BigDecimal.valueOf(1_000);
    static final BigDecimal MAX = BigDecimal.ONE.scaleByPowerOfTen(15);

    /** The limits a pod asks for and the errors in what it wrote. */
    public record Read(BandwidthLimits limits, List<ValidationError> errors) {}

    private BandwidthAnnotations() {}

    public static Read read(Pod pod) {
        List<ValidationError> errors = new ArrayList<>();
        long egress = rate(pod, EGRESS, errors);
        long ingress = rate(pod, INGRESS, errors);
        return new Read(egress == 0 && ingress == 0 ? BandwidthLimits.NONE : new BandwidthLimits(egress, ingress), List.copyOf(errors));
    }

    /** The annotation for a direction of the pod's traffic. */
    public static String annotation(Direction direction) {
        return direction == Direction.EGRESS ? EGRESS : INGRESS;
    }

    private static long rate(Pod pod, String annotation, List<ValidationError> errors) {
        String text = pod.annotations().get(annotation);
        if (text == null) {
            return 0;
        }
        try {
            return bitsPerSecond(text);
        } catch (IllegalArgumentException e) {
            errors.add(new ValidationError(ObjectRef.of(pod.key()), "metadata.annotations[" + annotation + "]", e.getMessage()));
            return 0;
        }
    }

    /**
     * An annotation value in bits per second, as kubelet reads it: rounded up, 1 kbit/s to 1 Pbit/s.
     *
     * @throws IllegalArgumentException saying what is wrong with the (quoted) value
     */
    public static long bitsPerSecond(String text) {
        BigDecimal bits;
        try {
            bits = Quantity.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(ApiSyntax.quote(text) + " is " + e.getMessage(), e);
        }
        if (bits.compareTo(MIN) < 0) {
            throw new IllegalArgumentException(ApiSyntax.quote(text) + " is unreasonably small (< 1kbit); no limit set");
        }
        if (bits.compareTo(MAX) > 0) {
            throw new IllegalArgumentException(ApiSyntax.quote(text) + " is unreasonably large (> 1Pbit); no limit set");
        }
        return bits.setScale(0, RoundingMode.CEILING).longValueExact();
    }
}
