/**
 * The Kubernetes API source. {@link io.npmagent.agent.source.k8s.KubeObjects} converts client-java
 * objects into the dataplane model; no client-java type leaves this package (the manifest loader
 * uses client-java types only inside its own conversion).
 */
package io.npmagent.agent.source.k8s;
