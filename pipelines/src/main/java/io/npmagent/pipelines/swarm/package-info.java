/**
 * The swarm pipeline ({@code pipelines/swarm}): what many agents cost one API server. One real agent
 * enforces ({@code scale}'s {@code AgentProcess} on a {@code ScaleNode}); N-1 {@link io.npmagent.pipelines.swarm.Watcher}s replay
 * its requests as read from the audit log ({@code AgentRequests}); {@code PodLifecycles} plays the pods'
 * lives; {@code ControlPlaneReading} reads the API server's cost; {@code SwarmRun} goes through the
 * profiles; {@code SwarmMain} is the command line.
 */
package io.npmagent.pipelines.swarm;
