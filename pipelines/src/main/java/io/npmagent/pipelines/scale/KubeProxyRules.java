package io.npmagent.pipelines.scale;

import java.util.List;

/**
 * A background of rules like kube-proxy's iptables mode writes for a set of services with two endpoints
 * each (nat: service portals, endpoint DNAT and masquerade marks; filter: KUBE-FORWARD), so the
 * agent's restores run against a realistically full ruleset, as in NPM's measurements.
 */
final class KubeProxyRules {
    private KubeProxyRules() {}

    /** iptables-restore input for {@code services}, each a cluster IP and its endpoint addresses. */
    static String restoreInput(List<Service> services) {
        StringBuilder nat = new StringBuilder("*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-MARK-MASQ - [0:0]\n:KUBE-POSTROUTING - [0:0]\n");
        StringBuilder rules = new StringBuilder();
        rules.append("-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n");
        rules.append("-A OUTPUT -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n");
        rules.append("-A POSTROUTING -m comment --comment \"kubernetes postrouting rules\" -j KUBE-POSTROUTING\n");
        rules.append("-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000\n");
        rules.append("-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN\n");
        rules.append("-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0\n");
        rules.append("-A KUBE-POSTROUTING -j MASQUERADE\n");
        for (int i = 0; i < services.size(); i++) {
            Service s = services.get(i);
            String svc = String.format("KUBE-SVC-%016X", (long) i * 7919 + 17);
            nat.append(':').append(svc).append(" - [0:0]\n");
            rules.append("-A KUBE-SERVICES -d ").append(s.clusterIp()).append("/32 -p tcp -m comment --comment \"")
                    .append(s.name()).append(":http cluster IP\" -m tcp --dport 80 -j ").append(svc).append('\n');
            for (int j = 0; j < s.endpoints().size(); j++) {
                String sep = String.format("KUBE-SEP-%016X", (long) i * 104729 + j);
                nat.append(':').append(sep).append(" - [0:0]\n");
                int left = s.endpoints().size() - j;
                rules.append("-A ").append(svc).append(left > 1
                        ? " -m statistic --mode random --probability " + String.format("%.5f", 1.0 / left) + " -j " + sep + "\n"
                        : " -j " + sep + "\n");
                String ep = s.endpoints().get(j);
                rules.append("-A ").append(sep).append(" -s ").append(ep).append("/32 -j KUBE-MARK-MASQ\n");
                rules.append("-A ").append(sep).append(" -p tcp -m tcp -j DNAT --to-destination ").append(ep).append(":80\n");
            }
        }
        nat.append(rules).append("COMMIT\n");
        nat.append("*filter\n:KUBE-FORWARD - [0:0]\n");
        nat.append("-A FORWARD -m comment --comment \"kubernetes forwarding rules\" -j KUBE-FORWARD\n");
        nat.append("-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP\n");
        nat.append("-A KUBE-FORWARD -m mark --mark 0x4000/0x4000 -j ACCEPT\n");
        nat.append("-A KUBE-FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n");
        nat.append("COMMIT\n");
        nat.append("*mangle\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n");
        return nat.toString();
    }

    record Service(String name, String clusterIp, List<String> endpoints) {}
}
