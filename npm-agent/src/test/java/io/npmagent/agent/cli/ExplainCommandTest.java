package io.npmagent.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ExplainCommandTest {
    private static final String SHOP = CompileCommandTest.SHOP;

    private static CliRun explain(String... args) {
        String[] all = new String[args.length + 3];
        all[0] = "explain";
        all[1] = "--manifests";
        all[2] = SHOP;
        System.arraycopy(args, 0, all, 3, args.length);
        return CliRun.of(all);
    }

    @Test
    void allowedIsExitZeroAndNamesTheRules() {
        CliRun run = explain("--from", "shop/api", "--to", "data/db", "--port", "5432");

        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).startsWith("shop/api@10.244.1.11 -> data/db@10.244.2.20 TCP/5432: ALLOWED")
                .contains("egress from shop/api: allowed by [shop/api-egress spec.egress[0]]")
                .contains("ingress to data/db: allowed by [data/db-from-api spec.ingress[0]]");
        assertThat(run.err()).isEmpty();
    }

    @Test
    void deniedIsExitThree() {
        CliRun run = explain("--from", "shop/frontend", "--to", "data/db", "--port", "5432");

        assertThat(run.exitCode()).isEqualTo(3);
        assertThat(run.out()).contains("DENIED").contains("ingress to data/db: DENIED");
    }

    @Test
    void ipv6UsesThePodsIpv6Addresses() {
        CliRun run = explain("--from", "shop/api", "--to", "data/db", "--port", "5432", "--ipv6");

        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).startsWith("shop/api@fd00:10:244:1::11 -> data/db@fd00:10:244:2::20 TCP/5432: ALLOWED");
    }

    @Test
    void addressesOutsideThePodNetworkGoThroughIpBlocks() {
        assertThat(explain("--from", "shop/api", "--to", "203.0.113.10", "--port", "443").exitCode()).isZero();
        assertThat(explain("--from", "shop/api", "--to", "203.0.113.13", "--port", "443").exitCode()).isEqualTo(3); // the except
        assertThat(explain("--from", "shop/api", "--to", "203.0.113.10", "--port", "80").exitCode()).isEqualTo(3);
        assertThat(explain("--from", "shop/api", "--to", "10.96.0.10", "--port", "53", "--protocol", "udp").exitCode())
                .as("a ClusterIP is no backend: DNS is admitted as the kube-dns pods").isEqualTo(3);
        assertThat(explain("--from", "203.0.113.9", "--to", "shop/frontend", "--port", "8080").exitCode()).isZero();
    }

    @Test
    void unknownPodIsAUsageError() {
        CliRun run = explain("--from", "shop/nope", "--to", "data/db", "--port", "5432");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.out()).isEmpty();
        assertThat(run.err()).contains("--from: no pod shop/nope in");
    }

    @Test
    void podWithoutSuchAddressIsAUsageError() {
        CliRun run = explain("--from", "shop/frontend", "--to", "data/db", "--port", "5432", "--ipv6");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("--from: pod shop/frontend has no IPv6 address");
    }

    @Test
    void badPortsAndContradictionsAreUsageErrors() {
        assertThat(explain("--from", "shop/api", "--to", "data/db", "--port", "0").err())
                .contains("--port must be between 1 and 65535, not 0");
        assertThat(explain("--from", "shop/api", "--to", "data/db", "--port", "70000").exitCode()).isEqualTo(2);
        assertThat(explain("--from", "shop/api", "--to", "data/db", "--port", "http").exitCode()).isEqualTo(2);
        assertThat(explain("--from", "shop/api", "--to", "data/db", "--port", "1", "--protocol", "ICMP").exitCode())
                .isEqualTo(2);
        assertThat(explain("--from", "shop/api", "--to", "10.96.0.10", "--port", "53", "--ipv6").err())
                .contains("--ipv6 was given, but 10.96.0.10 is an IPv4 address");
        assertThat(explain("--from", "nonsense", "--to", "data/db", "--port", "1").err())
                .contains("--from nonsense is neither NAMESPACE/POD nor an IP address");
        assertThat(explain("--from", "shop/api", "--port", "1").exitCode()).isEqualTo(2);
    }
}
