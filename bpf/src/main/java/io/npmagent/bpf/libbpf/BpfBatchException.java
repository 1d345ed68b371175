package io.npmagent.bpf.libbpf;

import java.util.HexFormat;

/**
 * A batch map operation stopped at one element. Every element before {@link #applied()} landed, the
 * failing one and every element after it did not: batches are ordered (peer sets before the rules that
 * use them), so nothing past a failure is applied, and the caller can retry from {@code applied()}.
 */
public final class BpfBatchException extends BpfException {
    private static final long serialVersionUID = 1L;

    private final int applied;
    private final int total;
    private final byte[] failedKey;

    BpfBatchException(String operation, String map, int errno, String errorText, int applied, int total, byte[] failedKey) {
        super(operation, map, errno, errorText, " at element " + applied + " of " + total
                + " (key " + HexFormat.of().formatHex(failedKey) + "); " + applied + " applied before it");
        this.applied = applied;
        this.total = total;
        this.failedKey = failedKey.clone();
    }

    /** How many elements, from the first, were applied; also the index of the failing element. */
    public int applied() {
        return applied;
    }

    /** How many elements the batch had. */
    public int total() {
        return total;
    }

    /** The key of the element that failed. */
    public byte[] failedKey() {
        return failedKey.clone();
    }
}
