package io.npmagent.harness.monitoring;

/**
 * Alertmanager's configuration for a test cluster: every alert to one webhook (the {@link AlertReceiverMain}),
 * resolutions too. Grouped per alert and node, so each alert on each node is a notification of its own; a
 * 10 s group wait and a 30 s group interval (Alertmanager's defaults are 30 s and 5 min) so a firing or a
 * resolution is delivered within seconds of Prometheus sending it, and the times a run prints are the rules'
 * own, not the routing's.
 */
public final class AlertmanagerConfig {
    private AlertmanagerConfig() {}

    public static String webhook(String url) {
        return """
                # Written by io.npmagent.harness.monitoring.AlertmanagerConfig.
                route:
                  receiver: webhook
                  group_by: [alertname, node]
                  group_wait: 10s
                  group_interval: 30s
                  repeat_interval: 4h
                receivers:
                  - name: webhook
                    webhook_configs:
                      - url: %s
                        send_resolved: true
                """.formatted(url);
    }
}
