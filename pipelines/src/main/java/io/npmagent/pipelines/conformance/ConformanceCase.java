package io.npmagent.pipelines.conformance;

import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import java.util.List;
import java.util.Map;

/**
 * One case of {@code pipelines/conformance/cases/}: steps applied cumulatively to the shared model,
 * each with the reachability expected afterwards. See {@code pipelines/conformance/README.md}.
 */
public record ConformanceCase(String name, List<Step> steps) {

    /** {@code applyManifests} holds each applied policy as YAML text, in the order of {@code apply}. */
    public record Step(
            int number,
            String description,
            List<NetworkPolicy> apply,
            List<String> applyManifests,
            List<PolicyKey> delete,
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

    /** A change to the model's labels: {@code add_pod_labels} or {@code add_namespace_labels}. */
    public record ModelChange(String op, String target, Map<String, String> labels) {}
}
