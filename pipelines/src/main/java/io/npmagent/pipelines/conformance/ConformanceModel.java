package io.npmagent.pipelines.conformance;

import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.Pod;
import java.util.ArrayList;
import java.util.List;

/** The cluster every case starts from ({@code model.yaml}): namespaces and pods, no policies. */
public record ConformanceModel(List<Namespace> namespaces, List<Pod> pods) {

    public List<ClusterEvent> asEvents() {
        List<ClusterEvent> events = new ArrayList<>();
        namespaces.forEach(n -> events.add(new ClusterEvent.NamespaceUpserted(n)));
        pods.forEach(p -> events.add(new ClusterEvent.PodUpserted(p)));
        return events;
    }
}
