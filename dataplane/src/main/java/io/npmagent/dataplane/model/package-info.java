/**
 * The cluster as the agent sees it: immutable records for namespaces, pods, nodes, NetworkPolicies and
 * ClusterNetworkPolicies (as written, unvalidated), addresses, prefixes and validated selectors, and the
 * tiers a connection is judged in. No Kubernetes client types: sources convert into these.
 */
package io.npmagent.dataplane.model;
