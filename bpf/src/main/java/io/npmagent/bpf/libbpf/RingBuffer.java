package io.npmagent.bpf.libbpf;

import java.util.function.Consumer;
import jnr.ffi.Pointer;
import jnr.ffi.annotations.Delegate;
import jnr.ffi.types.size_t;

/**
 * A BPF ring buffer read through libbpf (ring_buffer__new over its mmap'd pages): {@link #consume} hands
 * every record the programs submitted since the last call to the consumer, on the calling thread, without
 * waiting. Records are copied out before the consumer sees them, so it may keep them. One thread reads
 * it; {@link #close} frees it.
 */
public final class RingBuffer implements AutoCloseable {
    /** ring_buffer_sample_fn. */
    public interface SampleFn {
        @Delegate
        int sample(Pointer ctx, Pointer data, @size_t long size);
    }

    private final String name;
    private final Consumer<byte[]> records;
    /** Held for the buffer's life: libbpf keeps only the native address of the callback. */
    private final SampleFn callback;
    private Pointer rb;

    private RingBuffer(String name, Consumer<byte[]> records) {
        this.name = name;
        this.records = records;
        this.callback = this::sample;
    }

    /** Opens the ring buffer {@code map} (a BPF_MAP_TYPE_RINGBUF); the map may be closed after. */
    public static RingBuffer open(BpfMap map, Consumer<byte[]> records) {
        RingBuffer ring = new RingBuffer(map.name(), records);
        Pointer rb = LibBpfNative.lib().ring_buffer__new(map.fd(), ring.callback, null, null);
        if (rb == null) {
            throw LibBpfNative.error("ring_buffer__new", map.name(), LibBpfNative.lastErrno());
        }
        ring.rb = rb;
        return ring;
    }

    private int sample(Pointer ctx, Pointer data, long size) {
        byte[] record = new byte[(int) size];
        data.get(0, record, 0, record.length);
        try {
            records.accept(record);
        } catch (RuntimeException e) {
            // A consumer's bug must not unwind through libbpf's C frames; the record is dropped, counted by the consumer's caller.
            System.getLogger(RingBuffer.class.getName()).log(System.Logger.Level.WARNING, "ring buffer " + name + ": record dropped", e);
        }
        return 0;
    }

    /** Hands over what is there now; returns how many records. */
    public synchronized int consume() {
        if (rb == null) {
            throw new IllegalStateException("ring buffer " + name + " is closed");
        }
        return LibBpfNative.check(LibBpfNative.lib().ring_buffer__consume(rb), "ring_buffer__consume", name);
    }

    @Override
    public synchronized void close() {
        if (rb != null) {
            LibBpfNative.lib().ring_buffer__free(rb);
            rb = null;
        }
    }
}
