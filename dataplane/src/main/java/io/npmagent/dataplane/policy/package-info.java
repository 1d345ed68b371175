/**
 * From cluster to desired state: {@link io.npmagent.dataplane.policy.PolicyNormalizer} decides
 * defaulting and validation (failing closed), {@link io.npmagent.dataplane.policy.PolicyCompiler}
 * derives identities, peer-set membership and per-pod policy lists incrementally. Pure: no I/O, one thread.
 */
package io.npmagent.dataplane.policy;
