package io.npmagent.agent.backend;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * After a change of backend (the ConfigMap's Backend, or auto choosing differently after a kernel or
 * image change), what an earlier agent's other backend left in the kernel would go on judging with the
 * state of its last batch: tc programs and forward hooks on bpf, chains on iptables, a table on nft.
 * A policy deleted since would still cut traffic. So once this agent's own first whole state is in the
 * kernel (never before: the predecessor's rules enforce meanwhile), every other backend whose traces are
 * here is uninstalled, once.
 */
public final class PredecessorCleanup implements Runnable {
    private static final System.Logger LOG = System.getLogger(PredecessorCleanup.class.getName());
    private static final List<String> BACKENDS = List.of("bpf", "iptables-nft", "iptables-legacy", "nft");
    /** The legacy tables of this network namespace: none, no trace of iptables-legacy (and none is made by looking). */
    private static final Path LEGACY_TABLES = Path.of("/proc/net/ip_tables_names");

    private final String kept;
    private final Backends.Placement where;
    private final BooleanSupplier firstStateApplied;
    private boolean done;

    public PredecessorCleanup(String kept, Backends.Placement where, BooleanSupplier firstStateApplied) {
        this.kept = kept;
        this.where = where;
        this.firstStateApplied = firstStateApplied;
    }

    @Override
    public void run() {
        if (done || !firstStateApplied.getAsBoolean()) {
            return;
        }
        done = true;
        List<String> removed = new ArrayList<>();
        for (String other : BACKENDS) {
            if (other.equals(kept) || !tracesOf(other)) {
                continue;
            }
            try {
                removed.addAll(Backends.uninstall(other, where));
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "backend {0}: could not remove what backend {1} left in the kernel: {2}",
                        kept, other, e.getMessage());
            }
        }
        if (!removed.isEmpty()) {
            LOG.log(System.Logger.Level.INFO, "backend {0}: whatever an earlier agent left in the kernel for {1} is removed",
                    kept, String.join(", ", removed));
        }
    }

    private static boolean legacyTablesHere() {
        try {
            return Files.exists(LEGACY_TABLES) && !Files.readString(LEGACY_TABLES).isBlank();
        } catch (java.io.IOException e) {
            return false;
        }
    }

    /** Whether {@code backend} may have left something here: its pins, or its tools and (legacy) tables. */
    private boolean tracesOf(String backend) {
        return switch (backend) {
            case "bpf" -> Files.isDirectory(where.pinDir());
            case "iptables-legacy" -> (where.netns() != null || legacyTablesHere()) && Backends.available(backend, where);
            default -> Backends.available(backend, where);
        };
    }
}
