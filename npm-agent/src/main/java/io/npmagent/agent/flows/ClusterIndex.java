package io.npmagent.agent.flows;

import io.npmagent.dataplane.eval.NearestRule;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The cluster as flow verdicts read it: which pod owns an address, namespaces' labels and NetworkPolicies,
 * kept in step with the events the agent compiles (the model thread writes, flow readers read on theirs).
 * Every lookup is one hash probe, never a scan: at 100,000 pods a report costs what it costs at ten.
 *
 * <p>Ownership is the compiler's and the evaluator's rule: of the live pod-network pods listing an address,
 * the least by namespace/name. Host-network pods own nothing (their addresses are the node's), nor do
 * terminal pods; each address keeps its claimants sorted, so the owner after a delete is the next one.
 * The pods, namespaces and policies are the objects the compiler holds too: the index adds its map
 * entries, not copies.
 */
public final class ClusterIndex implements NearestRule.Cluster {
    private final Map<String, Namespace> namespaces = new ConcurrentHashMap<>();
    private final Map<PodKey, Pod> pods = new ConcurrentHashMap<>();
    /** Each address's claimants, sorted; the first owns it. Almost always one. */
    private final Map<IpAddress, PodKey[]> claimants = new ConcurrentHashMap<>();
    private final Map<PolicyKey, NetworkPolicy> policies = new ConcurrentHashMap<>();

    /** Takes one event, as the compiler does; model thread only. */
    public void take(ClusterEvent event) {
        if (event instanceof ClusterEvent.NamespaceUpserted e) {
            namespaces.put(e.namespace().name(), e.namespace());
        } else if (event instanceof ClusterEvent.NamespaceDeleted e) {
            namespaces.remove(e.name());
        } else if (event instanceof ClusterEvent.PodUpserted e) {
            podChanged(e.pod().key(), e.pod());
        } else if (event instanceof ClusterEvent.PodDeleted e) {
            podChanged(e.key(), null);
        } else if (event instanceof ClusterEvent.PolicyUpserted e) {
            policies.put(e.policy().key(), e.policy());
        } else if (event instanceof ClusterEvent.PolicyDeleted e) {
            policies.remove(e.key());
        }
        // ClusterNetworkPolicies and nodes: a flow's attribution names them already, and no near miss reads them.
    }

    private void podChanged(PodKey key, Pod next) {
        Pod before = pods.get(key);
        if (next != null && next.equals(before)) {
            return; // a relist or resync redelivers every pod unchanged
        }
        if (next == null) {
            pods.remove(key);
        } else {
            pods.put(key, next);
        }
        if (before != null && before.policyEndpoint()) {
            for (IpAddress ip : before.ips()) {
                if (next == null || !next.policyEndpoint() || !next.ips().contains(ip)) {
                    release(ip, key);
                }
            }
        }
        if (next != null && next.policyEndpoint()) {
            next.ips().forEach(ip -> claim(ip, key));
        }
    }

    private void claim(IpAddress ip, PodKey key) {
        claimants.compute(ip, (a, keys) -> {
            if (keys == null) {
                return new PodKey[] {key};
            }
            int at = Arrays.binarySearch(keys, key);
            if (at >= 0) {
                return keys;
            }
            int insert = -at - 1;
            PodKey[] more = new PodKey[keys.length + 1];
            System.arraycopy(keys, 0, more, 0, insert);
            more[insert] = key;
            System.arraycopy(keys, insert, more, insert + 1, keys.length - insert);
            return more;
        });
    }

    private void release(IpAddress ip, PodKey key) {
        claimants.computeIfPresent(ip, (a, keys) -> {
            int at = Arrays.binarySearch(keys, key);
            if (at < 0) {
                return keys;
            }
            if (keys.length == 1) {
                return null;
            }
            PodKey[] fewer = new PodKey[keys.length - 1];
            System.arraycopy(keys, 0, fewer, 0, at);
            System.arraycopy(keys, at + 1, fewer, at, keys.length - at - 1);
            return fewer;
        });
    }

    /** The pod that owns the address, or null (not a pod, a host-network pod's, or one this agent does not know). */
    public PodKey podKeyAt(IpAddress address) {
        PodKey[] keys = claimants.get(address);
        return keys == null ? null : keys[0];
    }

    @Override
    public Pod podAt(IpAddress address) {
        PodKey key = podKeyAt(address);
        return key == null ? null : pods.get(key);
    }

    @Override
    public Namespace namespace(String name) {
        Namespace ns = namespaces.get(name);
        return ns != null ? ns : Namespace.unknown(name);
    }

    @Override
    public NetworkPolicy policy(PolicyKey key) {
        return policies.get(key);
    }

    /** How many addresses have an owner. */
    public int addresses() {
        return claimants.size();
    }
}
