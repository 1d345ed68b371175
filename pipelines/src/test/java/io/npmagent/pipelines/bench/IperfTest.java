package io.npmagent.pipelines.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.dataplane.exec.CommandResult;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** iperf3's JSON report, and the server's per-second text report inside it (--get-server-output). */
class IperfTest {
    private static final String SERVER_TEXT = "Accepted connection from 10.78.0.20, port 53016\\n"
            + "[  5] local 10.78.0.10 port 5201 connected to 10.78.0.20 port 53020\\n"
            + "[ ID] Interval           Transfer     Bitrate\\n"
            + "[  5]   0.00-1.00   sec  7.45 MBytes  62.5 Mbits/sec                  \\n"
            + "[  5]   1.00-2.00   sec  5.96 MBytes  50.0 Mbits/sec                  \\n"
            + "[  5]   2.00-2.04   sec   640 KBytes  131 Mbits/sec                  \\n"
            + "- - - - - - - - - - - - - - - - - - - - - - - - -\\n"
            + "[ ID] Interval           Transfer     Bitrate\\n"
            + "[  5]   0.00-2.04   sec  14.0 MBytes  57.6 Mbits/sec                  receiver\\n";

    private static CommandResult run(String json) {
        return new CommandResult(List.of("iperf3"), 0, json, "");
    }

    @Test
    void theServersIntervalsAreReadFromItsTextReport() throws IOException {
        String json = "{\"end\": {\"sum_sent\": {\"retransmits\": 7}, \"sum_received\": {\"bits_per_second\": 57.6e6}},"
                + " \"server_output_text\": \"" + SERVER_TEXT + "\"}";
        assertThat(Iperf.report(run(json))).isEqualTo(new Iperf.Report(57.6e6, 7));
        List<Iperf.Interval> intervals = Iperf.receivedIntervals(run(json));
        assertThat(intervals).hasSize(3);
        assertThat(intervals.get(0).bytes()).isEqualTo(Math.round(7.45 * 1024 * 1024));
        assertThat(intervals.get(2).bytes()).isEqualTo(640 * 1024);
        assertThat(intervals.get(2).seconds()).isEqualTo(0.04, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void aReportWithoutTheServersTextSaysSo() {
        String json = "{\"end\": {\"sum_sent\": {}, \"sum_received\": {\"bits_per_second\": 1e6}}}";
        assertThatThrownBy(() -> Iperf.receivedIntervals(run(json))).hasMessageContaining("--get-server-output");
    }
}
