package io.npmagent.iptables.flow;

import io.npmagent.dataplane.flow.FlowVerdict;
import io.npmagent.dataplane.model.Direction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The NFLOG prefix a log rule writes beside a verdict: {@code npm:<verdict>:<direction>:<ref>}, e.g.
 * {@code npm:D:I:12} (denied, ingress, attribution number 12). Only the agent's own tokens: a letter
 * each for verdict ({@code D}, {@code A}) and direction ({@code I}, {@code E}), and the decimal
 * {@link io.npmagent.dataplane.flow.AttributionRefs} number. No policy or pod name ever reaches the
 * kernel (names are untrusted), and the prefix fits iptables' 64-byte limit with room to spare.
 */
public record FlowPrefix(FlowVerdict verdict, Direction direction, int ref) {
    private static final Pattern FORMAT = Pattern.compile("npm:([DA]):([IE]):(0|[1-9][0-9]{0,9})");

    public FlowPrefix {
        if (ref < 0) {
            throw new IllegalArgumentException("an attribution number is never negative: " + ref);
        }
    }

    /** The prefix text, as log rules carry it. */
    public String text() {
        return "npm:" + (verdict == FlowVerdict.DENIED ? 'D' : 'A') + ':' + (direction == Direction.INGRESS ? 'I' : 'E') + ':' + ref;
    }

    @Override
    public String toString() {
        return text();
    }

    /**
     * Reads a prefix back. Anything else (another program's log group, a prefix from an agent of another
     * format) is refused with the text quoted, so the reader can count and skip it.
     */
    public static FlowPrefix parse(String text) {
        Matcher m = FORMAT.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("not an npm-agent flow prefix: \"" + text.replaceAll("[^\\x20-\\x7e]", "?") + "\"");
        }
        long ref = Long.parseLong(m.group(3));
        if (ref > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("attribution number out of range in \"" + text + "\"");
        }
        return new FlowPrefix(m.group(1).equals("D") ? FlowVerdict.DENIED : FlowVerdict.ALLOWED,
                m.group(2).equals("I") ? Direction.INGRESS : Direction.EGRESS, (int) ref);
    }
}
