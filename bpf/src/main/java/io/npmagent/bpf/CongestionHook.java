package io.npmagent.bpf;

import io.npmagent.bpf.libbpf.BpfMap;
import io.npmagent.bpf.libbpf.BpfProgram;
import io.npmagent.bpf.libbpf.CgroupLink;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

/**
 * The sock_ops program of congestion.h ({@code npm_sock_ops}) linked at the cgroup that holds the pods'
 * processes ({@link PinnedCgroupLink}), where it gives each pod's new TCP connections the congestion
 * control its {@code npm-agent.io/tcp-congestion} names, and the counts of what it did.
 */
final class CongestionHook implements AutoCloseable {
    static final String PROGRAM = "npm_sock_ops";
    static final String STATS = "npm_tcp_stats";

    private final PinnedCgroupLink link;
    private final BpfMap stats;

    private CongestionHook(PinnedCgroupLink link, BpfMap stats) {
        this.link = link;
        this.stats = stats;
    }

    /** Links {@code program} at {@code cgroup}; a failure is kept as {@link #problem()} (pods keep the default). */
    static CongestionHook attach(BpfProgram program, BpfMap stats, Path pinDir, Path cgroup) {
        return new CongestionHook(PinnedCgroupLink.attach(program, pinDir, cgroup, CgroupLink.ATTACH_CGROUP_SOCK_OPS,
                "pods' TCP congestion control set", "pods' npm-agent.io/tcp-congestion is not applied, their connections keep the default"), stats);
    }

    /** Links again if the pin is gone or runs another program; returns 1 if it did. */
    int repair() {
        return link.repair();
    }

    /** Null while the link is in place, else why pods' congestion controls are not applied. */
    String problem() {
        return link.problem();
    }

    /** Connections given their pod's congestion control, and those the kernel refused it to, since the map was made. */
    long[] counts() {
        long[] out = new long[2];
        for (int i = 0; i < 2; i++) {
            byte[] perCpu = stats.lookup(ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(0, i).array());
            if (perCpu != null) {
                ByteBuffer b = ByteBuffer.wrap(perCpu).order(ByteOrder.nativeOrder());
                while (b.remaining() >= 8) {
                    out[i] += b.getLong();
                }
            }
        }
        return out;
    }

    @Override
    public void close() {
        link.close();
        stats.close();
    }
}
