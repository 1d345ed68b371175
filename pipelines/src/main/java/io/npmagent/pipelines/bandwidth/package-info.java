/**
 * {@code pipelines/bandwidth}: the eBPF EDT shaper against the CNI bandwidth plugin's TBF and against no
 * limit, between two sandbox pods. {@code BandwidthMain} runs the points one after the other,
 * {@code BandwidthRun} measures one (a sandbox of its own), {@code BandwidthManifests} writes its
 * directory, {@code TbfShaper} sets up the plugin's egress shaping, {@code RrProbe} drives the
 * request/response probe and {@code BandwidthTable} prints and writes the figures.
 */
package io.npmagent.pipelines.bandwidth;
