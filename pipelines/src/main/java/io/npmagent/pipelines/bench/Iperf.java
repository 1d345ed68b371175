package io.npmagent.pipelines.bench;

import com.google.gson.Gson;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import io.npmagent.dataplane.exec.CommandResult;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** iperf3's command lines and the one figure read from its JSON report: bulk throughput, one TCP stream. */
public final class Iperf {
    /** What the server prints once it listens (with {@code --forceflush}, at once). */
    public static final String READY = "Server listening";

    private Iperf() {}

    public static List<String> server(int port) {
        return List.of("iperf3", "--server", "--port", Integer.toString(port), "--forceflush");
    }

    /** {@code warmup} seconds of the run are omitted from the report (iperf3's {@code --omit}): slow start is not the datapath. */
    public static List<String> client(String address, int port, int seconds, int warmup) {
        return List.of("iperf3", "--client", address, "--port", Integer.toString(port), "--time", Integer.toString(seconds),
                "--omit", Integer.toString(warmup), "--json");
    }

    /** As {@link #client(String, int, int, int)}, with {@code streams} parallel TCP streams. */
    public static List<String> client(String address, int port, int seconds, int warmup, int streams) {
        List<String> argv = new ArrayList<>(client(address, port, seconds, warmup));
        argv.addAll(List.of("--parallel", Integer.toString(streams)));
        return argv;
    }

    /**
     * A run with nothing omitted (start included), reporting each second as the server received it
     * ({@code --get-server-output}): for what a flow does as it starts.
     */
    public static List<String> clientFromStart(String address, int port, int seconds) {
        return List.of("iperf3", "--client", address, "--port", Integer.toString(port), "--time", Integer.toString(seconds),
                "--interval", "1", "--json", "--get-server-output");
    }

    /** UDP datagrams of {@code length} bytes at {@code bitrate} (iperf3's form: {@code 50M}) for {@code seconds}: a sender TCP cannot slow down. */
    public static List<String> udpClient(String address, int port, int seconds, String bitrate, int length) {
        return List.of("iperf3", "--client", address, "--port", Integer.toString(port), "--time", Integer.toString(seconds), "--udp",
                "--bitrate", bitrate, "--length", Integer.toString(length), "--json");
    }

    /** One interval of the server's report: its length and the bytes received in it. */
    public record Interval(double seconds, long bytes) {}

    /** The server's intervals of a {@link #clientFromStart} run, in order. */
    public static List<Interval> receivedIntervals(CommandResult r) throws IOException {
        report(r); // the same checks: a report, no error
        try {
            JsonObject server = new Gson().fromJson(r.stdout(), JsonObject.class).getAsJsonObject("server_output_json");
            List<Interval> out = new ArrayList<>();
            for (var i : server.getAsJsonArray("intervals")) {
                JsonObject sum = i.getAsJsonObject().getAsJsonObject("sum");
                out.add(new Interval(sum.get("seconds").getAsDouble(), sum.get("bytes").getAsLong()));
            }
            return out;
        } catch (RuntimeException e) {
            throw new IOException("iperf3's report has no server_output_json.intervals (iperf3 3.1 or later with --get-server-output)", e);
        }
    }

    /** What iperf3 reports over the measured part of a run: what arrived (the receiver's sum) and the sender's retransmissions. */
    public record Report(double bitsPerSecond, long retransmits) {}

    /** Gbit/s received by the server over the measured part of the run (the receiver's sum, what arrived). */
    public static double gbitPerSecond(CommandResult r) throws IOException {
        return report(r).bitsPerSecond() / 1e9;
    }

    public static Report report(CommandResult r) throws IOException {
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
            JsonObject end = report.getAsJsonObject("end");
            JsonObject sent = end.getAsJsonObject("sum_sent");
            return new Report(end.getAsJsonObject("sum_received").get("bits_per_second").getAsDouble(),
                    sent.has("retransmits") ? sent.get("retransmits").getAsLong() : 0);
        } catch (RuntimeException e) {
            throw new IOException("iperf3's report has no end.sum_received.bits_per_second: " + r.errorSummary(), e);
        }
    }
}
