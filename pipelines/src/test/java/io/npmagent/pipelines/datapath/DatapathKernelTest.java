package io.npmagent.pipelines.datapath;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.Gson;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.npmagent.harness.sandbox.Sandbox;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The datapath pipeline, small, so it cannot rot: on nft with 0 and 10 policies, one second, once. Every
 * measured row has positive figures (to the server's address and through its ClusterIP, kube-proxy's
 * DNAT), the intruder reaches the server both ways without policies and is blocked both ways
 * with them (real packets: the policies were enforced while measuring), an unknown backend is a skipped
 * row, and nothing of the sandboxes is left behind. Figures are printed, never compared with a bar.
 */
class DatapathKernelTest {
    @TempDir
    Path dir;

    @Test
    void measuresEveryPointWithPoliciesEnforced() throws IOException {
        KernelTestSupport.require("python3", "setsid", "nft", "iperf3", "cc");
        Path json = dir.resolve("datapath.json");
        int exit = new CommandLine(new DatapathMain()).execute("--backend", "no-such-backend", "--backend", "nft", "--policies", "0,10",
                "--seconds", "1", "--repeat", "1", "--json", json.toString());

        JsonObject doc = new Gson().fromJson(Files.readString(json), JsonObject.class);
        List<JsonObject> rows = new ArrayList<>();
        for (JsonElement e : doc.getAsJsonArray("results")) {
            rows.add(e.getAsJsonObject());
        }
        assertThat(rows).hasSize(3);
        assertThat(rows.get(0).get("status").getAsString()).isEqualTo("skipped");
        for (JsonObject row : rows.subList(1, 3)) {
            assertThat(row.get("status").getAsString()).as("%s", row).isEqualTo("ok");
            assertThat(row.get("backend").getAsString()).isEqualTo("nft");
            assertThat(row.get("connectionsPerSecond").getAsDouble()).as("%s", row).isPositive();
            assertThat(row.get("serviceConnectionsPerSecond").getAsDouble()).as("through the ClusterIP: %s", row).isPositive();
            assertThat(row.get("gbitPerSecond").getAsDouble()).as("%s", row).isPositive();
        }
        assertThat(rows.get(1).get("policies").getAsInt()).isZero();
        assertThat(rows.get(1).get("intruderBlocked").getAsBoolean()).as("no policy selects the server").isFalse();
        assertThat(rows.get(1).get("intruderBlockedViaService").getAsBoolean()).as("nor through the ClusterIP").isFalse();
        assertThat(rows.get(2).get("policies").getAsInt()).isEqualTo(10);
        assertThat(rows.get(2).get("intruderBlocked").getAsBoolean()).as("10 policies, none admits the intruder").isTrue();
        assertThat(rows.get(2).get("intruderBlockedViaService").getAsBoolean()).as("nor through the ClusterIP").isTrue();
        assertThat(exit).isZero();
        assertThat(Sandbox.named(DatapathMain.sandboxName("nft")).namespaces()).as("sandbox down after each point").isEmpty();
    }
}
