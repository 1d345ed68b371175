package io.npmagent.pipelines.swarm;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The swarm pipeline, small, as CI runs it so it cannot rot: a real control plane with 600 pods, the real
 * agent on eBPF, three watchers replaying its audited requests (all three timing every pod event), churn with the load
 * generator's kubelet writes, and a rollout. The watchers must be in sync, see every pod write exactly once
 * (a missed or extra event fails it), and the real agent must enforce the probe's flips. About a minute.
 */
class SwarmSmokeKernelTest {
    @TempDir
    Path tmp;

    @Test
    void fourAgentsChurnAndRollOutWithEveryUpdateDelivered() throws Exception {
        KernelTestSupport.require("ip", "mount", "umount", "taskset");
        Path out = tmp.resolve("swarm");
        int exit = new CommandLine(new SwarmMain()).execute("--agents", "1,4", "--pods", "600", "--policies", "20", "--seconds", "5",
                "--profiles", "idle,churn,rollout", "--capture", "0", "--out", out.toString());
        assertThat(exit).isZero();

        JsonArray rows = JsonParser.parseString(Files.readString(out.resolve("swarm.json"))).getAsJsonArray();
        List<String> seen = new ArrayList<>();
        for (var e : rows) {
            JsonObject r = e.getAsJsonObject();
            seen.add(r.get("agents").getAsInt() + " " + r.get("profile").getAsString());
        }
        assertThat(seen).as("a size's fleet profiles are left out with the real agent alone")
                .containsExactly("1 start", "1 idle", "1 churn", "4 start", "4 idle", "4 churn", "4 rollout");

        JsonObject start = row(rows, 4, "start");
        assertThat(start.get("sync").getAsDouble()).as("three watchers in sync").isPositive();
        assertThat(start.getAsJsonObject("swarm").get("listPages").getAsLong()).as("the WatchList of the 600 pods and a page of each other kind, per watcher")
                .isGreaterThanOrEqualTo(3 * 4);
        assertThat(start.getAsJsonObject("cost").get("watches").getAsDouble()).as("four watches more per watcher")
                .isEqualTo(row(rows, 1, "start").getAsJsonObject("cost").get("watches").getAsDouble() + 3 * 4);

        JsonObject churn = row(rows, 4, "churn");
        JsonObject delivery = churn.getAsJsonObject("delivery");
        assertThat(delivery.get("watchersChecked").getAsInt()).isEqualTo(3);
        assertThat(delivery.get("missed").getAsLong()).isZero();
        assertThat(delivery.get("extra").getAsLong()).isZero();
        // 5 s of 10 lives begun and 10 ended a second: at least 45 pods each way, every write seen by three watchers.
        assertThat(delivery.getAsJsonArray("seconds").size()).isGreaterThanOrEqualTo(3 * 45 * 3);
        assertThat(churn.getAsJsonArray("writeAcks").size()).isGreaterThanOrEqualTo(45 * 6);
        assertThat(churn.get("writeFailures").getAsInt()).isZero();
        assertThat(churn.getAsJsonArray("flips").size()).as("the real agent enforced the probe's flips").isGreaterThanOrEqualTo(4);
        assertThat(churn.getAsJsonObject("cost").get("deliveries").getAsDouble())
                .isGreaterThan(row(rows, 1, "churn").getAsJsonObject("cost").get("deliveries").getAsDouble());
        assertThat(churn.getAsJsonObject("swarm").get("events").getAsLong()).as("every watcher read the churn's events").isGreaterThanOrEqualTo(3 * 45 * 6);

        assertThat(row(rows, 4, "rollout").get("sync").getAsDouble()).isPositive();
        assertThat(Files.readString(out.resolve("swarm.md"))).contains("| 4 | watchers | 600 | churn |", "events delivered a second per agent");
    }

    private static JsonObject row(JsonArray rows, int agents, String profile) {
        for (var e : rows) {
            JsonObject r = e.getAsJsonObject();
            if (r.get("agents").getAsInt() == agents && r.get("profile").getAsString().equals(profile)) {
                return r;
            }
        }
        throw new AssertionError("no row for " + agents + " agents, " + profile);
    }
}
