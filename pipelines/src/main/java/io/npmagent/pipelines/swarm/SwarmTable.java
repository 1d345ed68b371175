package io.npmagent.pipelines.swarm;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/** The swarm's figures as a table, one row per swarm size and profile: the console's and the report's. */
final class SwarmTable {
    private SwarmTable() {}

    static final String HEADER = "| agents | beside it | pods | profile | s | pod writes/s | watches | deliveries/s | bytes/event | API cores | etcd cores | API RSS MiB "
            + "| delivery p50/p99 s | missed / extra | cut off | relists | API write p99 s | API list p99 s | in sync s | agent p99 s | harness core busy |";
    static final String RULE = "|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|";

    static String line(SwarmRow r) {
        ControlPlaneReading.Cost c = r.cost();
        String delivery = r.delivery() == null || r.delivery().seconds().isEmpty() ? "-"
                : String.format(Locale.ROOT, "%.3f / %.3f", quantile(r.delivery().seconds(), 0.5), quantile(r.delivery().seconds(), 0.99));
        String missed = r.delivery() == null ? "-" : r.delivery().watchersChecked() == 0 ? "n/a"
                : r.delivery().missed() + " / " + r.delivery().extra();
        return String.format(Locale.ROOT, "| %,d | %s | %,d | %s | %.0f | %.0f | %.0f | %,.0f | %s | %.2f | %.2f | %,.0f | %s | %s | %.0f | %d | %s | %s | %s | %s | %s |",
                r.agents(), r.fleet(), r.pods(), r.profile(), c.seconds(), r.writeAcks().size() / c.seconds(), c.watches(), c.deliveries(), size(c.bytesPerEvent()), c.apiCores(), c.etcdCores(),
                c.apiRss() / 1048576.0, delivery, missed, c.terminated(), r.swarm().relists(), seconds(c.writeP99()), seconds(c.listP99()),
                seconds(r.sync()), r.flips().isEmpty() ? "-" : String.format(Locale.ROOT, "%.3f", quantile(r.flips(), 0.99)),
                share(c.harnessBusy()));
    }

    static String table(List<SwarmRow> rows) {
        StringBuilder b = new StringBuilder(HEADER).append('\n').append(RULE).append('\n');
        rows.forEach(r -> b.append(line(r)).append('\n'));
        return b.toString();
    }

    private static String size(double bytes) {
        return Double.isNaN(bytes) ? "-" : String.format(Locale.ROOT, "%,.0f", bytes);
    }

    static String share(double s) {
        return Double.isNaN(s) ? "-" : String.format(Locale.ROOT, "%.2f", s);
    }

    private static String seconds(double s) {
        return Double.isNaN(s) ? "-" : String.format(Locale.ROOT, "%.3f", s);
    }

    /** The {@code q} quantile of {@code values}, nearest rank. */
    static double quantile(List<Double> values, double q) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int rank = (int) Math.ceil(q * sorted.size());
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1)));
    }
}
