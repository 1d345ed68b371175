package io.npmagent.pipelines.bench;

import com.google.gson.Gson;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import io.npmagent.dataplane.exec.CommandResult;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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

    /** One stream's interval line of iperf3's text report: {@code [  5]   0.00-1.00   sec  7.45 MBytes  62.5 Mbits/sec}. */
    private static final Pattern INTERVAL = Pattern.compile(
            "^\\[\\s*\\d+\\]\\s+([0-9.]+)-([0-9.]+)\\s+sec\\s+([0-9.]+)\\s+([KMG]?)Bytes\\s+[0-9.]+\\s+[KMG]?bits/sec\\s*$");

    /**
     * The server's intervals of a {@link #clientFromStart} run, in order: from its text report
     * ({@code server_output_text}; iperf3 prints transfers to 3 significant figures, in units of 1024).
     * The summary lines (marked sender or receiver) are left out.
     */
    public static List<Interval> receivedIntervals(CommandResult r) throws IOException {
        report(r); // the same checks: a report, no error
        JsonObject doc = new Gson().fromJson(r.stdout(), JsonObject.class);
        if (!doc.has("server_output_text")) {
            throw new IOException("iperf3's report has no server_output_text (iperf3 3.1 or later, with --get-server-output)");
        }
        List<Interval> out = new ArrayList<>();
        for (String line : doc.get("server_output_text").getAsString().split("\n")) {
            Matcher m = INTERVAL.matcher(line);
            if (m.matches()) {
                double bytes = Double.parseDouble(m.group(3)) * switch (m.group(4)) {
                    case "K" -> 1024.0;
                    case "M" -> 1024.0 * 1024;
                    case "G" -> 1024.0 * 1024 * 1024;
                    default -> 1.0;
                };
                out.add(new Interval(Double.parseDouble(m.group(2)) - Double.parseDouble(m.group(1)), Math.round(bytes)));
            }
        }
        if (out.isEmpty()) {
            throw new IOException("iperf3's server reported no interval: " + doc.get("server_output_text").getAsString().strip());
        }
        return out;
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
