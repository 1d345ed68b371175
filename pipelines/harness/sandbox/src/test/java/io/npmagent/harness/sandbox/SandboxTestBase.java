package io.npmagent.harness.sandbox;

import io.npmagent.harness.cli.HarnessMain;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.Gson;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.npmagent.agent.cli.CliRun;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the sandbox's kernel tests share: a manifest directory, sandboxes named by the JVM's pid (taken
 * down after each test), and the probe's JSON read as the sandbox's contract says.
 */
abstract class SandboxTestBase {
    static final Gson GSON = new Gson();
    private final List<String> names = new ArrayList<>();

    @TempDir
    Path dir;

    @BeforeEach
    void require() {
        KernelTestSupport.require("python3", "setsid", "nft");
    }

    @AfterEach
    void down() {
        names.forEach(n -> HarnessMain.run("sandbox", "down", "--name", n));
    }

    String name(String base) {
        String n = base + "-" + (ProcessHandle.current().pid() % 100000);
        names.add(n);
        return n;
    }

    static String pod(String name, String app, String ips, String ports) {
        return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: x, labels: {app: " + app + "}}\n"
                + "spec: {containers: [{name: c, image: i, ports: [" + ports + "]}]}\n"
                + "status: {phase: Running" + (ips.isEmpty() ? "" : ", podIPs: [" + ips + "]") + "}\n";
    }

    void write(String file, String text) throws IOException {
        Files.writeString(dir.resolve(file), text);
    }

    JsonObject probe(String sandbox) {
        CliRun r = HarnessMain.run("sandbox", "probe", "--name", sandbox, "--output", "json");
        assertThat(r.exitCode()).as(r.err()).isZero();
        return GSON.fromJson(r.out(), JsonObject.class);
    }

    static boolean allowed(JsonObject probe, String from, String to, int port, String protocol, String family) {
        for (JsonElement e : probe.getAsJsonArray("results")) {
            JsonObject r = e.getAsJsonObject();
            if (!r.has("service") && r.get("from").getAsString().equals(from) && r.get("to").getAsString().equals(to) && r.get("port").getAsInt() == port
                    && r.get("protocol").getAsString().equals(protocol) && r.get("family").getAsString().equals(family)) {
                return r.get("allowed").getAsBoolean();
            }
        }
        throw new AssertionError("no probe " + from + " -> " + to + " " + protocol + "/" + port + " " + family + " in " + probe);
    }

    /** The probe from {@code from} through Service {@code service}'s {@code port} in {@code family}; a verdict, never an error. */
    static JsonObject throughService(JsonObject probe, String from, String service, int port, String family) {
        for (JsonElement e : probe.getAsJsonArray("results")) {
            JsonObject r = e.getAsJsonObject();
            if (r.has("service") && r.get("service").getAsString().equals(service) && r.get("from").getAsString().equals(from)
                    && r.get("family").getAsString().equals(family) && r.get("port").getAsInt() == port) {
                assertThat(r.has("error")).as("%s", r).isFalse();
                return r;
            }
        }
        throw new AssertionError("no probe " + from + " -> Service " + service + " TCP/" + port + " " + family + " in " + probe);
    }
}
