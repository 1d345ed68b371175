package io.npmagent.dataplane.backend;

/**
 * The kernel (or a backend's own check) refused a batch. The message says what was refused and why,
 * in the kernel tool's words; {@code input} is what was sent (a restore file, an nft script) for the
 * log, never echoed to users in full.
 */
public class BackendException extends RuntimeException {
    private final String input;

    public BackendException(String message, String input) {
        super(message);
        this.input = input;
    }

    public BackendException(String message, String input, Throwable cause) {
        super(message, cause);
        this.input = input;
    }

    public String input() {
        return input;
    }
}
