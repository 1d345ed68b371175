package io.npmagent.pipelines.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** dig's output (9.18, as Debian 12 ships it; each text below is one it printed) read by its answer, not its exit code. */
class DigTest {
    private static final String NAME = "probe.npm-conformance.test.";

    private static String answered(String status, String answer, String transport) {
        return """

                ; <<>> DiG 9.18.49-1~deb12u3-Debian <<>> @10.96.0.10 -p 53 probe.npm-conformance.test. A +time=2 +tries=1
                ; (1 server found)
                ;; global options: +cmd
                ;; Got answer:
                ;; ->>HEADER<<- opcode: QUERY, status: %s, id: 56379
                ;; flags: qr aa rd; QUERY: 1, ANSWER: 1, AUTHORITY: 0, ADDITIONAL: 1
                ;; WARNING: recursion requested but not available

                ;; OPT PSEUDOSECTION:
                ; EDNS: version: 0, flags:; udp: 1232
                ;; QUESTION SECTION:
                ;probe.npm-conformance.test.\tIN\tA
                %s
                ;; Query time: 0 msec
                ;; SERVER: 10.96.0.10#53(10.96.0.10) (%s)
                ;; WHEN: Tue Dec 01 15:49:03 UTC 2026
                ;; MSG SIZE  rcvd: 97

                """.formatted(status, answer, transport);
    }

    private static final String ANSWER = "\n;; ANSWER SECTION:\nprobe.npm-conformance.test. 30\tIN\tA\t192.0.2.53\n";

    @Test
    void anAnswerOverUdpResolvesOverUdpOnly() {
        Dig.Lookup l = Dig.Lookup.parse(NAME, answered("NOERROR", ANSWER, "UDP"));
        assertThat(l.status()).isEqualTo("NOERROR");
        assertThat(l.transport()).isEqualTo("UDP");
        assertThat(l.addresses()).containsExactly("192.0.2.53");
        assertThat(l.resolves("192.0.2.53", "UDP")).isTrue();
        assertThat(l.resolves("192.0.2.53", "TCP")).as("dig fell back or was asked otherwise: not the transport asked for").isFalse();
        assertThat(l.resolves("192.0.2.54", "UDP")).isFalse();
        assertThat(l.describe()).isEqualTo("NOERROR over UDP, A 192.0.2.53");
    }

    @Test
    void anAnswerOverTcp() {
        Dig.Lookup l = Dig.Lookup.parse(NAME, answered("NOERROR", ANSWER, "TCP"));
        assertThat(l.resolves("192.0.2.53", "TCP")).isTrue();
    }

    @Test
    void nxdomainAndRefusedAreAnswersWithoutTheRecord() {
        for (String status : new String[] {"NXDOMAIN", "REFUSED", "SERVFAIL"}) {
            Dig.Lookup l = Dig.Lookup.parse(NAME, answered(status, "", "UDP"));
            assertThat(l.status()).isEqualTo(status);
            assertThat(l.addresses()).isEmpty();
            assertThat(l.resolves("192.0.2.53", "UDP")).isFalse();
            assertThat(l.describe()).isEqualTo(status + " over UDP, no A record");
        }
    }

    @Test
    void aRecordOfAnotherNameIsNotTheAnswer() {
        String other = "\n;; ANSWER SECTION:\nother.npm-conformance.test. 30\tIN\tA\t192.0.2.53\n";
        assertThat(Dig.Lookup.parse(NAME, answered("NOERROR", other, "UDP")).resolves("192.0.2.53", "UDP")).isFalse();
    }

    @Test
    void udpSilenceIsNoAnswer() {
        Dig.Lookup l = Dig.Lookup.parse(NAME, """
                ;; communications error to 10.96.0.10#53: timed out

                ; <<>> DiG 9.18.49-1~deb12u3-Debian <<>> @10.96.0.10 -p 53 probe.npm-conformance.test. A +time=2 +tries=1 +notcp
                ; (1 server found)
                ;; global options: +cmd
                ;; no servers could be reached
                """);
        assertThat(l.status()).isNull();
        assertThat(l.resolves("192.0.2.53", "UDP")).isFalse();
        assertThat(l.describe()).isEqualTo("no answer (communications error to 10.96.0.10#53: timed out)");
    }

    @Test
    void tcpSilenceAndRefusalAreNoAnswer() {
        Dig.Lookup timedOut = Dig.Lookup.parse(NAME, """
                ;; Connection to 10.96.0.10#53(10.96.0.10) for probe.npm-conformance.test. failed: timed out.
                ;; no servers could be reached
                """);
        assertThat(timedOut.status()).isNull();
        assertThat(timedOut.resolves("192.0.2.53", "TCP")).isFalse();
        assertThat(timedOut.describe())
                .isEqualTo("no answer (Connection to 10.96.0.10#53(10.96.0.10) for probe.npm-conformance.test. failed: timed out.)");
        Dig.Lookup refused = Dig.Lookup.parse(NAME, """
                ;; Connection to 127.0.0.1#15354(127.0.0.1) for probe.npm-conformance.test. failed: connection refused.
                ;; no servers could be reached
                """);
        assertThat(refused.status()).isNull();
        assertThat(refused.describe()).contains("connection refused");
    }

    @Test
    void oneTryOfTwoSecondsOverTheTransportAskedFor() {
        assertThat(Dig.argv("10.96.0.10", 53, NAME, false))
                .containsExactly("dig", "@10.96.0.10", "-p", "53", NAME, "A", "+time=2", "+tries=1", "+notcp");
        assertThat(Dig.argv("10.96.0.10", 53, NAME, true)).endsWith("+tcp");
    }
}
