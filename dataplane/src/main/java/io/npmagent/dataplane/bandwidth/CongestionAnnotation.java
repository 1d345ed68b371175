package io.npmagent.dataplane.bandwidth;

import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.ValidationError;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Reads {@code npm-agent.io/tcp-congestion}: the congestion control (for example {@code bbr},
 * {@code cubic}) the pod's TCP connections get, both the ones it opens and the ones it accepts. The
 * value must name an algorithm the node's kernel offers ({@code tcp_available_congestion_control});
 * anything else is an error naming the pod, the annotation and the value, and the pod's connections
 * keep the default (a congestion control is no security boundary: leaving it alone opens nothing).
 */
public final class CongestionAnnotation {
    public static final String ANNOTATION = "npm-agent.io/tcp-congestion";
    /** TCP_CA_NAME_MAX is 16 with the NUL. */
    public static final int MAX_LENGTH = 15;
    private static final Pattern NAME = Pattern.compile("[a-z0-9_]{1," + MAX_LENGTH + "}");

    /** The congestion control a pod asks for (null: the default) and the errors in what it wrote. */
    public record Read(String congestion, List<ValidationError> errors) {}

    private CongestionAnnotation() {}

    /**
     * @param available the node's {@code tcp_available_congestion_control}; null when it is not known
     *                  (compiling manifests off the node), then only the syntax is checked
     */
    public static Read read(Pod pod, Set<String> available) {
        String text = pod.annotations().get(ANNOTATION);
        if (text == null) {
            return new Read(null, List.of());
        }
        String problem = problem(text, available);
        if (problem == null) {
            return new Read(text, List.of());
        }
        return new Read(null, List.of(new ValidationError(ObjectRef.of(pod.key()), "metadata.annotations[" + ANNOTATION + "]", problem)));
    }

    private static String problem(String text, Set<String> available) {
        if (!NAME.matcher(text).matches()) {
            return ApiSyntax.quote(text) + " is no congestion control name (1 to " + MAX_LENGTH
                    + " lower-case letters, digits or '_'); the pod's connections keep the default";
        }
        if (available != null && !available.contains(text)) {
            return ApiSyntax.quote(text) + " is not available on this node (tcp_available_congestion_control: "
                    + String.join(" ", new TreeSet<>(available)) + "); the pod's connections keep the default";
        }
        return null;
    }
}
