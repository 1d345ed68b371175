package io.npmagent.bpf;

import io.npmagent.bpf.libbpf.BpfException;
import io.npmagent.bpf.libbpf.MapIo;
import io.npmagent.bpf.maps.BandwidthStatsMap;
import io.npmagent.bpf.maps.DropMap;
import io.npmagent.dataplane.model.PodKey;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The programs' per-pod counters for a scrape: policy drops and the shaper's figures, per-CPU maps keyed by
 * endpoint id and direction, summed and labelled by pod and direction. Read on the scrape thread.
 */
final class PodCounters {
    private final MapIo drops;
    private final MapIo bandwidthStats;
    private volatile Map<Integer, PodKey> podByEndpoint = Map.of();

    PodCounters(MapIo drops, MapIo bandwidthStats) {
        this.drops = drops;
        this.bandwidthStats = bandwidthStats;
    }

    /** The placed pods by endpoint id, as the flush thread last set them. */
    void pods(Map<Integer, PodKey> byEndpoint) {
        podByEndpoint = Map.copyOf(byEndpoint);
    }

    Map<List<String>, long[]> drops() {
        return perPod(drops, v -> {
            DropMap.Value d = DropMap.Value.sumPerCpu(v);
            return new long[] {d.packets(), d.bytes()};
        });
    }

    Map<List<String>, long[]> bandwidth() {
        return perPod(bandwidthStats, v -> {
            BandwidthStatsMap.Value b = BandwidthStatsMap.Value.sumPerCpu(v);
            return new long[] {b.packets(), b.bytes(), b.marked(), b.horizonDrops(), b.policed(), b.protectedPackets(), b.slowed(), b.held()};
        });
    }

    private Map<List<String>, long[]> perPod(MapIo map, Function<byte[], long[]> sum) {
        Map<Integer, PodKey> byEndpoint = podByEndpoint;
        Map<List<String>, long[]> out = new HashMap<>();
        List<byte[][]> entries;
        try {
            entries = map.entries();
        } catch (BpfException closed) {
            return out; // the backend was closed or uninstalled: nothing to count any more
        }
        for (byte[][] kv : entries) {
            DropMap.Key k = DropMap.Key.decode(kv[0]);
            PodKey pod = byEndpoint.get(k.endpoint());
            if (pod != null) {
                out.put(List.of(pod.namespace(), pod.name(), k.direction() == 0 ? "ingress" : "egress"), sum.apply(kv[1]));
            }
        }
        return out;
    }
}
