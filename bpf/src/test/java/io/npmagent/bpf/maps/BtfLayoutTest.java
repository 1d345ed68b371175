package io.npmagent.bpf.maps;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.ProcessRunner;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The C structs as clang laid them out, read from the compiled object's BTF with bpftool, against the
 * layouts the Java classes encode: every size and every member offset. A field added or reordered on
 * one side only fails here.
 */
class BtfLayoutTest {
    @TempDir
    Path dir;

    /** struct name -> size, and member -> byte offset, as the Java encoders write them. */
    private static final Map<String, Integer> SIZES = offsets(
            "npm_state", StateMap.VALUE_SIZE,
            "npm_endpoint_key", EndpointMap.KEY_SIZE,
            "npm_endpoint", EndpointMap.VALUE_SIZE,
            "npm_ipcache_key", IpcacheMap.KEY_SIZE,
            "npm_ipcache_value", IpcacheMap.VALUE_SIZE,
            "npm_policy_key", PolicyMap.KEY_SIZE,
            "npm_policy_value", PolicyMap.VALUE_SIZE,
            "npm_ct_key", CtMap.KEY_SIZE,
            "npm_ct_value", CtMap.VALUE_SIZE,
            "npm_drop_key", DropMap.KEY_SIZE,
            "npm_rate_key", DropMap.KEY_SIZE,
            "npm_bw_config", BandwidthConfigMap.VALUE_SIZE,
            "npm_bw_stats", BandwidthStatsMap.VALUE_SIZE,
            "npm_verdict_config", VerdictMaps.CONFIG_SIZE,
            "npm_flow_key", VerdictMaps.KEY_SIZE,
            "npm_flow_record", VerdictMaps.RECORD_SIZE);
    private static final Map<String, Map<String, Integer>> OFFSETS = Map.ofEntries(
            Map.entry("npm_ipcache_key", offsets("prefixlen", 0, "version", 4, "family", 5, "addr", 8)),
            Map.entry("npm_ipcache_value", offsets("identity", 0, "atom", 4)),
            Map.entry("npm_policy_key", offsets("prefixlen", 0, "version", 4, "direction", 5, "endpoint", 8, "identity", 12,
                    "protocol", 16, "port", 18)),
            Map.entry("npm_endpoint_key", offsets("ifindex", 0, "version", 4)),
            Map.entry("npm_endpoint", offsets("id", 0, "judged", 4, "rate", 8, "congestion", 24, "tiers", 40, "isolation", 56)),
            Map.entry("npm_verdict_config", offsets("flags", 0, "rate", 4, "interval_ns", 8)),
            Map.entry("npm_flow_key", offsets("endpoint", 0, "direction", 4, "verdict", 5, "reason", 6, "protocol", 7, "family", 8,
                    "port", 10, "peer", 12)),
            Map.entry("npm_flow_record", offsets("first", 0, "last", 8, "packets", 16, "bytes", 24, "reported", 32, "ref", 40,
                    "reporter", 44, "has_service", 45, "service_port", 46, "saddr", 48, "daddr", 64, "service", 80)),
            Map.entry("npm_bw_config", offsets("horizon_ns", 0, "ecn_ns", 8, "burst_ns", 16, "flow", 24)),
            Map.entry("npm_bw_stats", offsets("packets", 0, "bytes", 8, "marked", 16, "horizon_drops", 24, "policed", 32,
                    "protected_", 40, "slowed", 48, "held", 56)),
            Map.entry("npm_rate_key", offsets("endpoint", 0, "direction", 4)),
            Map.entry("npm_ct_key", offsets("endpoint", 0, "family", 4, "protocol", 5, "sport", 6, "dport", 8, "saddr", 12, "daddr", 28)),
            Map.entry("npm_ct_value", offsets("last_seen", 0, "direction", 8, "closing", 9)),
            Map.entry("npm_drop_key", offsets("endpoint", 0, "direction", 4)),
            Map.entry("npm_drop_value", offsets("packets", 0, "bytes", 8)));

    private static Map<String, Integer> offsets(Object... kv) {
        Map<String, Integer> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], (Integer) kv[i + 1]);
        }
        return m;
    }

    @Test
    void everySharedStructMatchesItsJavaLayout() throws IOException {
        KernelTestSupport.require("bpftool");
        Path object = dir.resolve("tc_pod.o");
        try (InputStream in = getClass().getResourceAsStream("/io/npmagent/bpf/tc_pod.o")) {
            Files.copy(in, object);
        }
        CommandResult r = ProcessRunner.host().run(List.of("bpftool", "btf", "dump", "file", object.toString(), "format", "raw"), "",
                Duration.ofSeconds(30));
        assertThat(r.ok()).as(r.errorSummary()).isTrue();
        Map<String, Integer> sizes = new HashMap<>();
        Map<String, Map<String, Integer>> members = new HashMap<>();
        Pattern struct = Pattern.compile("^\\[\\d+\\] STRUCT '(\\w+)' size=(\\d+)");
        Pattern member = Pattern.compile("^\\s+'(\\w+)' type_id=\\d+ bits_offset=(\\d+)");
        String current = null;
        for (String line : r.stdout().lines().toList()) {
            Matcher s = struct.matcher(line);
            Matcher m = member.matcher(line);
            if (s.find()) {
                current = s.group(1);
                sizes.put(current, Integer.parseInt(s.group(2)));
                members.put(current, new HashMap<>());
            } else if (m.find() && current != null) {
                members.get(current).put(m.group(1), Integer.parseInt(m.group(2)) / 8);
            } else if (!line.startsWith("\t") && !line.startsWith(" ")) {
                current = null;
            }
        }
        SIZES.forEach((name, size) -> assertThat(sizes).as("size of struct %s", name).containsEntry(name, size));
        OFFSETS.forEach((name, expected) -> expected.forEach((field, offset) ->
                assertThat(members.get(name)).as("offset of %s.%s", name, field).containsEntry(field, offset)));
    }
}
