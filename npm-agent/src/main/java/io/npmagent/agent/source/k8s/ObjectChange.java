package io.npmagent.agent.source.k8s;

import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ObjectRef;

/**
 * One API object's change as the informers saw it: the model's event (null for an object the model
 * cannot hold, which is reported instead) and the object's reference and resourceVersion (null for a
 * delete), from which {@link StateDigest} tells what the agent has taken from the server. Not the
 * desired state's row change ({@code dataplane.desired.Change}), which is what a compiled event becomes.
 */
public record ObjectChange(ClusterEvent event, ObjectRef ref, String resourceVersion) {}
