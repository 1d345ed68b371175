/**
 * The reference semantics: {@link io.npmagent.dataplane.eval.ReferenceEvaluator} answers whether a
 * connection is allowed and by which tier, policy and rule (Admin and Baseline ClusterNetworkPolicies
 * around NetworkPolicy), straight from the cluster state. Every backend is tested against it.
 */
package io.npmagent.dataplane.eval;
