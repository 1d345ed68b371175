/**
 * Every metric name and bucket layout, in {@link io.npmagent.dataplane.metrics.Metrics}. Values in
 * seconds.
 */
package io.npmagent.dataplane.metrics;
