/**
 * The cluster as the agent sees it: immutable records for namespaces, pods and NetworkPolicies (as
 * written, unvalidated), addresses, prefixes and validated selectors. No Kubernetes client types:
 * sources convert into these.
 */
package io.npmagent.dataplane.model;
