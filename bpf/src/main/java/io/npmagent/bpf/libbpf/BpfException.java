package io.npmagent.bpf.libbpf;

/**
 * A libbpf or bpf() call failed. Carries what an operator needs to act without a debugger: the
 * operation (the libbpf function, e.g. {@code bpf_map_update_elem}), the object it acted on (a map,
 * program, interface or path), the errno and libbpf's text for it ({@code libbpf_strerror}, which also
 * knows libbpf's own codes from 4000 up, such as a verifier rejection).
 *
 * <p>Unchecked: a failed kernel call is handled where a whole batch is taken back
 * ({@code BpfBackend#apply}), not at every call site.
 */
public class BpfException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String operation;
    private final String object;
    private final int errno;
    private final String errorText;

    public BpfException(String operation, String object, int errno, String errorText) {
        this(operation, object, errno, errorText, "");
    }

    /** {@code detail} is appended to the message (e.g. which element of a batch failed). */
    protected BpfException(String operation, String object, int errno, String errorText, String detail) {
        super(operation + " " + object + ": " + errorText + (errno > 0 ? " (" + Errno.name(errno) + ")" : "") + detail);
        this.operation = operation;
        this.object = object;
        this.errno = errno;
        this.errorText = errorText;
    }

    /** The libbpf function (or step) that failed. */
    public String operation() {
        return operation;
    }

    /** The map, program, interface or path it failed on. */
    public String object() {
        return object;
    }

    /** The positive errno; 0 when the failure has none (e.g. libbpf could not be loaded). */
    public int errno() {
        return errno;
    }

    /** libbpf's description of {@link #errno()}. */
    public String errorText() {
        return errorText;
    }
}
