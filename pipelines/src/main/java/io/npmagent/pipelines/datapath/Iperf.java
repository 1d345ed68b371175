package io.npmagent.pipelines.datapath;

import com.google.gson.Gson;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import io.npmagent.iptables.exec.CommandResult;
import java.io.IOException;
import java.util.List;

/** iperf3's command lines and the one figure read from its JSON report: bulk throughput, one TCP stream. */
final class Iperf {
    /** What the server prints once it listens (with {@code --forceflush}, at once). */
    static final String READY = "Server listening";

    private Iperf() {}

    static List<String> server(int port) {
        return List.of("iperf3", "--server", "--port", Integer.toString(port), "--forceflush");
    }

    /** {@code warmup} seconds of the run are omitted from the report (iperf3's {@code --omit}): slow start is not the datapath. */
    static List<String> client(String address, int port, int seconds, int warmup) {
        return List.of("iperf3", "--client", address, "--port", Integer.toString(port), "--time", Integer.toString(seconds),
                "--omit", Integer.toString(warmup), "--json");
    }

    /** Gbit/s received by the server over the measured part of the run (the receiver's sum, what arrived). */
    static double gbitPerSecond(CommandResult r) throws IOException {
        JsonObject report;
        try {
            report = new Gson().fromJson(r.stdout(), JsonObject.class);
        } catch (JsonParseException e) {
            report = null;
        }
        if (report == null) {
            throw new IOException("iperf3 printed no report: " + r.errorSummary());
        }
        if (report.has("error")) {
            throw new IOException("iperf3: " + report.get("error").getAsString());
        }
        try {
            return report.getAsJsonObject("end").getAsJsonObject("sum_received").get("bits_per_second").getAsDouble() / 1e9;
        } catch (RuntimeException e) {
            throw new IOException("iperf3's report has no end.sum_received.bits_per_second: " + r.errorSummary(), e);
        }
    }
}
