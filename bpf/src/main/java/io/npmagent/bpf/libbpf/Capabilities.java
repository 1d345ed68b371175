package io.npmagent.bpf.libbpf;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What this host offers the eBPF backend, probed once at start: the agent enforces with eBPF only when
 * {@link #canEnforce()}, and otherwise reports {@link #missing()} and falls back to the next backend
 * instead of failing open.
 *
 * <p>Required: libbpf; the sched_cls program type; the map types tc_pod.c declares (hash, array,
 * LPM trie, LRU hash, per-CPU hash); the helpers it calls (map lookup and update, ktime_get_ns); bpffs
 * at the pin root, since without pinned maps a restart would start enforcement from empty. Optional:
 * batch map operations (else one syscall per element) and tcx (else tc clsact, which we use anyway).
 *
 * @param libbpfVersion "major.minor" of the loaded libbpf, or null when it cannot be loaded
 * @param libbpfError why libbpf cannot be loaded, or null
 * @param kernelRelease uname's release
 * @param tcxReason why tcx is not available, or null when it is
 */
public record Capabilities(
        String libbpfVersion,
        String libbpfError,
        String kernelRelease,
        boolean schedCls,
        boolean hashMap,
        boolean arrayMap,
        boolean lpmTrie,
        boolean lruHash,
        boolean percpuHash,
        boolean helperMapLookup,
        boolean helperMapUpdate,
        boolean helperKtimeGetNs,
        boolean batchOps,
        boolean netfilterPrograms,
        boolean tcx,
        String tcxReason,
        Path bpffsPath,
        boolean bpffs) {

    /** Where pinned state lives unless configured otherwise. */
    public static final Path DEFAULT_BPFFS = Path.of("/sys/fs/bpf");

    // enum bpf_func_id
    static final int HELPER_MAP_LOOKUP_ELEM = 1;
    static final int HELPER_MAP_UPDATE_ELEM = 2;
    static final int HELPER_KTIME_GET_NS = 5;
    static final int HELPER_SKB_SET_TSTAMP = 192;

    public static Capabilities probe() {
        return probe(DEFAULT_BPFFS);
    }

    /** Probes the running kernel through libbpf, with {@code bpffsPath} as the pin root to check. */
    public static Capabilities probe(Path bpffsPath) {
        String kernel = System.getProperty("os.version");
        boolean bpffs = bpffsAt(bpffsPath);
        LibBpfNative.Api lib;
        try {
            lib = LibBpfNative.lib();
        } catch (BpfException e) {
            return new Capabilities(null, e.getMessage(), kernel, false, false, false, false, false, false,
                    false, false, false, false, false, false, "libbpf is not available", bpffsPath, bpffs);
        }
        int major = lib.libbpf_major_version();
        int minor = lib.libbpf_minor_version();
        int sched = BpfProgram.TYPE_SCHED_CLS;
        return new Capabilities(major + "." + minor, null, kernel,
                lib.libbpf_probe_bpf_prog_type(sched, null) == 1,
                lib.libbpf_probe_bpf_map_type(BpfMap.TYPE_HASH, null) == 1,
                lib.libbpf_probe_bpf_map_type(BpfMap.TYPE_ARRAY, null) == 1,
                lib.libbpf_probe_bpf_map_type(BpfMap.TYPE_LPM_TRIE, null) == 1,
                lib.libbpf_probe_bpf_map_type(BpfMap.TYPE_LRU_HASH, null) == 1,
                lib.libbpf_probe_bpf_map_type(BpfMap.TYPE_PERCPU_HASH, null) == 1,
                lib.libbpf_probe_bpf_helper(sched, HELPER_MAP_LOOKUP_ELEM, null) == 1,
                lib.libbpf_probe_bpf_helper(sched, HELPER_MAP_UPDATE_ELEM, null) == 1,
                lib.libbpf_probe_bpf_helper(sched, HELPER_KTIME_GET_NS, null) == 1,
                batchOpsWork(),
                NetfilterLink.programsSupported(),
                tcxReason(major, minor, kernel) == null,
                tcxReason(major, minor, kernel),
                bpffsPath, bpffs);
    }

    /**
     * Whether a forwarded packet keeps its departure timestamp when it crosses from a pod's namespace
     * to the host's: Linux 5.18 made {@code skb->tstamp} a delivery time that survives the crossing,
     * and added {@code bpf_skb_set_tstamp} with it, which is what this probes. Without it the host's fq
     * would see BBR's pacing timestamps cleared.
     */
    public static boolean timestampsKeptAcrossNamespaces() {
        try {
            return LibBpfNative.lib().libbpf_probe_bpf_helper(BpfProgram.TYPE_SCHED_CLS, HELPER_SKB_SET_TSTAMP, null) == 1;
        } catch (BpfException | LinkageError e) {
            return false;
        }
    }

    /** Whether {@code path} is a directory on a bpffs mount (statfs magic BPF_FS_MAGIC). */
    public static boolean bpffsAt(Path path) {
        try {
            return LibC.isBpffs(path);
        } catch (LinkageError | RuntimeException e) {
            return false;
        }
    }

    /** A tiny hash map and one batched update: the kernel has the command and hash maps implement it. */
    private static boolean batchOpsWork() {
        try (BpfMap probe = BpfMap.create(BpfMap.TYPE_HASH, "npm_probe", 4, 4, 1, 0)) {
            return probe.updateBatches() && probe.updateBatch(List.of(new byte[4]), List.of(new byte[4])) == 1;
        } catch (BpfException e) {
            return false;
        }
    }

    /**
     * tcx (BPF links on the tc hook, no qdisc) needs bpf_program__attach_tcx, new in libbpf 1.3, and
     * kernel 6.6. Null when both are there.
     */
    static String tcxReason(int libbpfMajor, int libbpfMinor, String kernelRelease) {
        List<String> why = new ArrayList<>();
        if (libbpfMajor < 1 || (libbpfMajor == 1 && libbpfMinor < 3)) {
            why.add("libbpf " + libbpfMajor + "." + libbpfMinor + " has no bpf_program__attach_tcx (needs 1.3)");
        }
        int[] kernel = majorMinor(kernelRelease);
        if (kernel[0] < 6 || (kernel[0] == 6 && kernel[1] < 6)) {
            why.add("kernel " + kernelRelease + " has no tcx (needs 6.6)");
        }
        return why.isEmpty() ? null : String.join("; ", why);
    }

    /** {6, 18} for "6.18.44-fc"; {0, 0} for what does not parse. */
    static int[] majorMinor(String release) {
        String[] parts = release == null ? new String[0] : release.split("[.-]");
        try {
            return new int[] {Integer.parseInt(parts[0]), Integer.parseInt(parts[1])};
        } catch (RuntimeException e) {
            return new int[] {0, 0};
        }
    }

    /** Whether every required feature is there. */
    public boolean canEnforce() {
        return missing().isEmpty();
    }

    /** Whether the kernel and libbpf offer everything, a bpffs to pin on aside (for callers that mount their own). */
    public boolean kernelCanEnforce() {
        return missing().stream().allMatch(m -> m.startsWith("bpffs "));
    }

    /** The required features that are not there, in words an operator can act on; empty when none. */
    public List<String> missing() {
        List<String> out = new ArrayList<>();
        if (libbpfVersion == null) {
            out.add("libbpf (" + libbpfError + ")");
            return out;
        }
        need(out, schedCls, "program type sched_cls");
        need(out, hashMap, "map type hash");
        need(out, arrayMap, "map type array");
        need(out, lpmTrie, "map type lpm_trie");
        need(out, lruHash, "map type lru_hash");
        need(out, percpuHash, "map type percpu_hash");
        need(out, helperMapLookup, "helper bpf_map_lookup_elem for sched_cls");
        need(out, helperMapUpdate, "helper bpf_map_update_elem for sched_cls");
        need(out, helperKtimeGetNs, "helper bpf_ktime_get_ns for sched_cls");
        // Egress through a Service is judged after kube-proxy's DNAT, at the forward hook (forward.h).
        need(out, netfilterPrograms, "program type netfilter (Linux 6.4), to judge egress after kube-proxy's DNAT");
        need(out, bpffs, "bpffs mounted at " + bpffsPath);
        return out;
    }

    private static void need(List<String> out, boolean present, String what) {
        if (!present) {
            out.add(what);
        }
    }

    /** One status line, e.g. for the log at start and /debug. */
    public String describe() {
        StringBuilder s = new StringBuilder();
        s.append("eBPF: libbpf ").append(libbpfVersion == null ? "missing" : libbpfVersion)
                .append(", kernel ").append(kernelRelease).append("; ");
        List<String> missing = missing();
        s.append(missing.isEmpty() ? "can enforce" : "cannot enforce, missing: " + String.join(", ", missing));
        s.append("; batch map ops ").append(batchOps ? "yes" : "no (one syscall per element)");
        s.append("; tcx ").append(tcx ? "yes (tc clsact in use)" : "no (" + tcxReason + "), tc clsact in use");
        return s.toString();
    }
}
