package io.npmagent.pipelines.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What the pipelines read from /proc: a process's memory (status) and CPU time (stat), a core's time (/proc/stat). */
public final class ProcFiles {
    private ProcFiles() {}

    /** A memory field of /proc/PID/status in bytes ({@code VmRSS:}, {@code VmHWM:}, ...), or -1 if it has none. */
    public static long statusBytes(long pid, String field) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith(field)) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        return -1;
    }

    /** User and system CPU time of the process so far, in seconds. */
    public static double cpuSeconds(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        // After the command: state is field 3, utime 14 and stime 15 (1-based) of the whole line.
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
    }

    /**
     * A core's time so far, in clock ticks: busy is all but idle and iowait; guest time is left out of both, since the
     * kernel counts it in user time already.
     */
    public record CoreTicks(long busy, long all) {
        /** The share of the time from {@code earlier} to this that the core was busy (NaN if no tick passed). */
        public double busyShareSince(CoreTicks earlier) {
            long all = this.all - earlier.all;
            return all > 0 ? (double) (busy - earlier.busy) / all : Double.NaN;
        }
    }

    /** A core's time so far, from /proc/stat. */
    public static CoreTicks coreTicks(int core) throws IOException {
        String prefix = "cpu" + core + " ";
        for (String line : Files.readAllLines(Path.of("/proc/stat"))) {
            if (line.startsWith(prefix)) {
                String[] f = line.substring(prefix.length()).trim().split(" +");
                long all = 0;
                for (int i = 0; i < 8; i++) { // user nice system idle iowait irq softirq steal
                    all += Long.parseLong(f[i]);
                }
                return new CoreTicks(all - Long.parseLong(f[3]) - Long.parseLong(f[4]), all);
            }
        }
        throw new IOException("/proc/stat has no cpu" + core);
    }
}
