/**
 * The Admin and Baseline tiers of ClusterNetworkPolicy (policy.networking.k8s.io/v1beta1): what a
 * policy means once validated ({@link io.npmagent.dataplane.tier.ClusterPolicyNormalizer}, the one
 * place for its validation and for how an invalid part fails closed), and the order of the policies
 * within a tier ({@link io.npmagent.dataplane.tier.TierOrder}). The reference evaluator walks the
 * tiers; the compiler is to read the same effective form and the same order.
 */
package io.npmagent.dataplane.tier;
