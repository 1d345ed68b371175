/**
 * The cluster as the agent sees it: immutable records for namespaces, pods and NetworkPolicies (as\n * written, unvalidated), addresses, prefixes and validated selectors. No Kubernetes client types:\n * sources convert into these.
 */
package io.npmagent.dataplane.model;
