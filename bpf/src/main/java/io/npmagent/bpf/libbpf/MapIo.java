package io.npmagent.bpf.libbpf;

import java.util.List;

/**
 * What the backend's map writer needs of a map: a small seam, so that the double-buffered write, the
 * flip and the read-back can run against an in-memory map in unit tests. {@link BpfMap} is the kernel's.
 * Every operation may throw {@link BpfException}; a batch that throws may have applied a prefix of its
 * elements, as the kernel's batch calls do.
 */
public interface MapIo {
    /** The map's name, for errors and metrics. */
    String name();

    /** The value, or null if there is none. */
    byte[] lookup(byte[] key);

    /** Creates or replaces one element. */
    void update(byte[] key, byte[] value);

    /** Creates or replaces every element, in order; returns how many were applied. */
    int updateBatch(List<byte[]> keys, List<byte[]> values);

    /** Deletes every key, in order (a missing key is skipped); returns how many were deleted. */
    int deleteBatch(List<byte[]> keys);

    /** Every element as {key, value}. */
    List<byte[][]> entries();

    int maxEntries();
}
