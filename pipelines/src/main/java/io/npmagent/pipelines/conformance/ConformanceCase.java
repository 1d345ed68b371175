package io.npmagent.pipelines.conformance;

import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.Protocol;
import java.util.List;
import java.util.Map;

/**
 * One case of {@code pipelines/conformance/cases/}: steps applied cumulatively to the shared model,
 * each with the reachability expected afterwards. See {@code pipelines/conformance/README.md}.
 */
public record ConformanceCase(String name, List<Step> steps) {

    /**
     * {@code apply} holds each applied policy (NetworkPolicy or ClusterNetworkPolicy) as the upsert it is, and
     * {@code applyManifests} as YAML text, in the same order; {@code delete} the deletes.
     */
    public record Step(
            int number,
            String description,
            List<ClusterEvent> apply,
            List<String> applyManifests,
            List<ClusterEvent> delete,
            List<ModelChange> modelChanges,
            List<Probe> probes,
            Map<Expectation, Boolean> exceptions) {

        /** Whether {@code from} may reach {@code to} on the probe after this step. */
        public boolean expected(PodKey from, PodKey to, Probe probe) {
            Boolean exception = exceptions.get(new Expectation(from, to, probe.port(), probe.protocol()));
            return exception != null ? exception : probe.allowedByDefault();
        }
    }

    /** A port and protocol every ordered pair of distinct pods is tried on, and the default answer. */
    public record Probe(int port, Protocol protocol, boolean allowedByDefault) {}

    /** The key of an exception to a probe's default. */
    public record Expectation(PodKey from, PodKey to, int port, Protocol protocol) {}

    /** The object an upsert or delete of a policy of either kind is about. */
    public static ObjectRef ref(ClusterEvent event) {
        if (event instanceof ClusterEvent.PolicyUpserted e) {
            return ObjectRef.of(e.policy().key());
        }
        if (event instanceof ClusterEvent.PolicyDeleted e) {
            return ObjectRef.of(e.key());
        }
        if (event instanceof ClusterEvent.ClusterPolicyUpserted e) {
            return ObjectRef.clusterNetworkPolicy(e.policy().name());
        }
        if (event instanceof ClusterEvent.ClusterPolicyDeleted e) {
            return ObjectRef.clusterNetworkPolicy(e.name());
        }
        throw new IllegalArgumentException("not a policy event: " + event);
    }

    /** A change to the model's labels: {@code add_pod_labels} or {@code add_namespace_labels}. */
    public record ModelChange(String op, String target, Map<String, String> labels) {}
}
