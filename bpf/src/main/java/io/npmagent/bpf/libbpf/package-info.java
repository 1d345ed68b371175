/**
 * The libbpf binding: our only native calls, through jnr-ffi, against the system's libbpf.so.1
 * (1.1 or later).
 *
 * <ul>
 *   <li>{@link io.npmagent.bpf.libbpf.BpfObject}: open an ELF object, load it, pin its maps under a root
 *       on bpffs and adopt them again after a restart;</li>
 *   <li>{@link io.npmagent.bpf.libbpf.BpfMap}: raw keys and values, single and batched, by descriptor;</li>
 *   <li>{@link io.npmagent.bpf.libbpf.BpfProgram}: a loaded program; pin, and test runs on crafted packets;</li>
 *   <li>{@link io.npmagent.bpf.libbpf.Tc}: our filter on an interface's clsact hook (fixed handle and
 *       priority, replaced in place);</li>
 *   <li>{@link io.npmagent.bpf.libbpf.NetnsThread}: a thread inside a network namespace, where tc calls
 *       must run for that namespace's interfaces;</li>
 *   <li>{@link io.npmagent.bpf.libbpf.Capabilities}: what the host offers, probed once;</li>
 *   <li>{@link io.npmagent.bpf.libbpf.BpfException}, {@link io.npmagent.bpf.libbpf.BpfBatchException}:
 *       the operation, object, errno and libbpf's words for every failure.</li>
 * </ul>
 *
 * <p>Package-private: {@code LibBpfNative} and {@code LibC} (the C signatures), {@code Layouts} (every
 * struct offset, checked against the headers by {@code LayoutTest}), {@code LibBpfLog} (libbpf's
 * messages into the log, the kernel's netlink words into exceptions), {@code Errno}, {@code FdKind}.
 *
 * <p>Handles ({@code BpfMap}, {@code BpfProgram}) own duplicated descriptors: they outlive the object
 * that loaded them, and closing one never closes another's descriptor.
 */
package io.npmagent.bpf.libbpf;
