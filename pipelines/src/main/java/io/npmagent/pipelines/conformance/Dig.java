package io.npmagent.pipelines.conformance;

import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.dataplane.exec.ProcessRunner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code dig} (Debian's {@code bind9-dnsutils}) inside a sandbox pod's network namespace: one A query, one
 * try of at most 2 s, over UDP or TCP, judged by what came back (the answer section, the status and the
 * transport dig says it used), not by its exit code. dig binds a fresh random source port for each query,
 * so a UDP lookup right after a policy change is a new flow (a repeat of one of the last 30 s, one in tens
 * of thousands, would be that old flow to conntrack: the case's second try covers it).
 */
final class Dig {
    private static final Pattern STATUS = Pattern.compile("->>HEADER<<- opcode: \\S+, status: ([A-Z]+),");
    private static final Pattern SERVER = Pattern.compile("^;; SERVER: \\S+ \\((UDP|TCP)\\)$", Pattern.MULTILINE);

    private Dig() {}

    /** What one query got: the status and transport of the answer (null: no answer), and the A records for the name. */
    record Lookup(String name, String status, String transport, List<String> addresses, String failure) {
        Lookup {
            addresses = List.copyOf(addresses);
        }

        /** Whether the answer came over {@code transport}, said NOERROR and held exactly {@code address} for the name. */
        boolean resolves(String address, String transport) {
            return "NOERROR".equals(status) && transport.equals(this.transport) && addresses.equals(List.of(address));
        }

        /** For a report: what came back, or why nothing did, in dig's words. */
        String describe() {
            if (status == null) {
                return "no answer (" + failure + ")";
            }
            return status + " over " + transport + (addresses.isEmpty() ? ", no A record" : ", A " + String.join(" ", addresses));
        }

        /** Reads dig's default output for a query of {@code name}. */
        static Lookup parse(String name, String output) {
            Matcher status = STATUS.matcher(output);
            Matcher server = SERVER.matcher(output);
            List<String> addresses = new ArrayList<>();
            boolean inAnswer = false;
            for (String line : output.lines().toList()) {
                if (line.startsWith(";; ANSWER SECTION:")) {
                    inAnswer = true;
                } else if (line.isBlank() || line.startsWith(";")) {
                    inAnswer = false;
                } else if (inAnswer) {
                    String[] f = line.trim().split("\\s+");
                    // NAME TTL CLASS TYPE DATA
                    if (f.length == 5 && f[0].equalsIgnoreCase(name) && f[2].equals("IN") && f[3].equals("A")) {
                        addresses.add(f[4]);
                    }
                }
            }
            String failure = output.lines().map(String::strip).filter(l -> l.startsWith(";;") && !l.startsWith(";; global options")
                            && !l.startsWith(";; Got answer")).findFirst().map(l -> l.substring(2).strip()).orElse(output.strip());
            return new Lookup(name, status.find() ? status.group(1) : null, server.find() ? server.group(1) : null, addresses,
                    failure.isEmpty() ? "dig printed nothing" : failure);
        }
    }

    /** dig's arguments: {@code name} A at {@code server}, one try, 2 s, over TCP or UDP (that one alone). */
    static List<String> argv(String server, int port, String name, boolean tcp) {
        return List.of("dig", "@" + server, "-p", Integer.toString(port), name, "A", "+time=2", "+tries=1", tcp ? "+tcp" : "+notcp");
    }

    /** Runs the lookup in network namespace {@code netns} (null: this process's own). */
    static Lookup lookup(String netns, String server, int port, String name, boolean tcp) {
        List<String> argv = new ArrayList<>(netns == null ? List.of() : List.of("ip", "netns", "exec", netns));
        argv.addAll(argv(server, port, name, tcp));
        CommandResult r = ProcessRunner.host().run(argv, "", Duration.ofSeconds(15));
        if (r.exitCode() != 0 && r.exitCode() != 9 && r.stdout().isBlank()) { // 9: no reply, which parse reports
            return new Lookup(name, null, null, List.of(), r.errorSummary());
        }
        return Lookup.parse(name, r.stdout() + r.stderr());
    }

    static String transport(boolean tcp) {
        return tcp ? "TCP" : "UDP";
    }
}
