package io.npmagent.bpf.libbpf;

import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.annotations.Delegate;
import jnr.ffi.annotations.Out;
import jnr.ffi.types.size_t;

/**
 * libbpf's messages, into the agent's log instead of raw stderr (libbpf_set_print), with one rewrite:
 * the netlink "Kernel error message" libbpf prints for every refused tc request is logged at DEBUG
 * and kept for the calling thread, because most such refusals are expected ({@link Tc} asks whether
 * a qdisc exists by creating it) and the rest become a {@link BpfException} that carries the text.
 *
 * <p>The callback receives printf's format and a {@code va_list}; vsnprintf formats them. On LP64 Linux
 * a {@code va_list} parameter is passed as a pointer, so the pointer libbpf hands us is what vsnprintf
 * takes. It is read once, as C requires.
 */
final class LibBpfLog {
    private LibBpfLog() {}

    private static final System.Logger LOG = System.getLogger("io.npmagent.bpf.libbpf");
    private static final String KERNEL = "Kernel error message: ";
    private static final int MAX_MESSAGE = 8192;
    // enum libbpf_print_level
    private static final int LIBBPF_WARN = 0;
    private static final int LIBBPF_INFO = 1;

    /** libbpf_print_fn_t. */
    public interface PrintFn {
        @Delegate
        int print(int level, Pointer format, Pointer args);
    }

    /** vsnprintf from libc, for the callback alone. */
    public interface Format {
        int vsnprintf(@Out byte[] buf, @size_t long size, Pointer format, Pointer args);
    }

    private static final ThreadLocal<String> LAST_KERNEL_MESSAGE = new ThreadLocal<>();
    /** Held here for the life of the process: libbpf keeps only the native address. */
    private static PrintFn callback;
    private static Format format;

    /** Installs the callback once, right after libbpf is loaded. */
    static synchronized void install(LibBpfNative.Api lib) {
        if (callback != null) {
            return;
        }
        format = LibraryLoader.create(Format.class).failImmediately().load("c");
        callback = LibBpfLog::print;
        lib.libbpf_set_print(callback);
    }

    private static int print(int level, Pointer fmt, Pointer args) {
        try {
            byte[] buf = new byte[MAX_MESSAGE];
            int n = format.vsnprintf(buf, buf.length, fmt, args);
            String message = new String(buf, 0, Math.max(0, Math.min(n, buf.length - 1)), StandardCharsets.UTF_8).strip();
            int kernel = message.indexOf(KERNEL);
            if (kernel >= 0) {
                LAST_KERNEL_MESSAGE.set(message.substring(kernel + KERNEL.length()));
                LOG.log(Level.DEBUG, message);
            } else {
                LOG.log(level == LIBBPF_WARN ? Level.WARNING : level == LIBBPF_INFO ? Level.INFO : Level.DEBUG, message);
            }
        } catch (RuntimeException | Error e) {
            // Never let an exception unwind into C.
        }
        return 0;
    }

    /** Forgets this thread's last kernel message: call before a request whose refusal should carry it. */
    static void clearKernelMessage() {
        LAST_KERNEL_MESSAGE.remove();
    }

    /** The kernel's words on this thread's last refused netlink request since {@link #clearKernelMessage()}, or "". */
    static String kernelMessage() {
        String m = LAST_KERNEL_MESSAGE.get();
        return m == null ? "" : m;
    }
}
