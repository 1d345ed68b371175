package io.npmagent.dataplane.backend;

/**
 * What a backend holds in the kernel, for metrics and {@code /debug}: policies, rules (or map
 * entries), sets and their entries.
 */
public record BackendStatus(String backend, int policies, long rules, long sets, long setEntries) {}
