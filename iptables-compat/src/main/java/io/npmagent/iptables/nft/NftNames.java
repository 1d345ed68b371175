package io.npmagent.iptables.nft;

import io.npmagent.dataplane.model.Direction;
import io.npmagent.iptables.model.ChainId;
import io.npmagent.iptables.model.Names;
import io.npmagent.iptables.model.SetId;
import java.util.regex.Pattern;

/**
 * Names of the objects in the agent's table. Every name is fixed or a prefix plus a hash of what the
 * object is ({@link Names#hash}), never object text: names are untrusted, and a hash is always a valid
 * nft identifier (a letter first, then {@code [a-z0-9_]}). Names carry their family ({@code 4}/{@code 6})
 * because one {@code inet} table holds both.
 *
 * <ul>
 *   <li>base chains {@code egress}, {@code ingress} (forward hook), {@code to_node} (input hook); verdict maps
 *       {@code egress4} … {@code ingress6};</li>
 *   <li>policy chains {@code pol_in4_<16>}, {@code pol_eg6_<16>}: hash of the policy's namespace/name;</li>
 *   <li>pod chains {@code pod_in4_<16>}, {@code pod_eg6_<16>}: hash of the pod's namespace/name;</li>
 *   <li>ClusterNetworkPolicy chains {@code cnp_in4_<16>}, {@code cnp_eg6_<16>}: hash of the policy's name
 *       (the same hash as the iptables chain's, {@link Names#clusterPolicyHash});</li>
 *   <li>sets {@code s4_<20>} (selector), {@code c4_<20>} (an ipBlock's prefixes), {@code x4_<20>} (its
 *       excepts), {@code n4_<20>} (pods serving a named port): hash of {@link SetId#canonical()}.</li>
 * </ul>
 */
public final class NftNames {
    public static final String FAMILY = "inet";
    public static final String TABLE = "npm_agent";
    /** How statements name the table. */
    public static final String TABLE_REF = FAMILY + " " + TABLE;

    /** Any name this class makes; what read-back may spell back into a script by name. */
    private static final Pattern OURS = Pattern.compile(
            "egress|ingress|to_node|(egress|ingress)[46]|(pol|pod|cnp)_(in|eg)[46]_[a-z2-7]{16}|[scxn][46]_[a-z2-7]{20}");

    private NftNames() {}

    /** The base chain on the input hook: local pods' connections to their own node, judged as their egress. */
    public static final String TO_NODE = "to_node";

    /** The base chain that judges one direction. */
    public static String baseChain(Direction d) {
        return d == Direction.INGRESS ? "ingress" : "egress";
    }

    /** The verdict map a dispatch id stands for: local pod address to {@code jump <pod chain>}. */
    public static String dispatchMap(ChainId.Dispatch d) {
        return baseChain(d.direction()) + d.family().digit();
    }

    /** A policy or pod chain. */
    public static String chain(ChainId id) {
        if (id instanceof ChainId.PolicyChain p) {
            return "pol_" + dir(p.direction()) + p.family().digit() + "_"
                    + Names.hash("policy:" + lengthPrefixed(p.policy().namespace(), p.policy().name()), 16);
        }
        if (id instanceof ChainId.ClusterPolicyChain p) {
            return "cnp_" + dir(p.direction()) + p.family().digit() + "_" + Names.clusterPolicyHash(p.policy());
        }
        if (id instanceof ChainId.PodChain p) {
            return "pod_" + dir(p.direction()) + p.family().digit() + "_"
                    + Names.hash("pod:" + lengthPrefixed(p.pod().namespace(), p.pod().name()), 16);
        }
        throw new IllegalArgumentException("dispatch is a verdict map, not a chain: " + id);
    }

    /** A set: selector members, an ipBlock's prefixes, or named-port members. */
    public static String set(SetId id) {
        char kind = id instanceof SetId.Selector ? 's' : id instanceof SetId.Cidr ? 'c' : 'n';
        return kind + "" + id.family().digit() + "_" + Names.hash(id.canonical(), 20);
    }

    /** The set of an ipBlock's excepts (nft interval sets have no {@code nomatch}). */
    public static String excepts(SetId.Cidr id) {
        return "x" + id.family().digit() + "_" + Names.hash(id.canonical(), 20);
    }

    /** Whether {@code name} is one this class makes, so a script may spell it as read back. */
    public static boolean ours(String name) {
        return OURS.matcher(name).matches();
    }

    private static String dir(Direction d) {
        return d == Direction.INGRESS ? "in" : "eg";
    }

    /** Namespace and name joined so that no two pairs give one text ({@code a/b}+{@code c} vs {@code a}+{@code b/c}). */
    private static String lengthPrefixed(String namespace, String name) {
        return namespace.length() + ":" + namespace + "/" + name;
    }
}
