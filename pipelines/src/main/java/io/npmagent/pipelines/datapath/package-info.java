/**
 * The datapath pipeline ({@code pipelines/datapath}): what policies cost the packets. Per backend and
 * policy count, one sandbox driven through its CLI; new TCP connections per second ({@code tcprate}, C)
 * and bulk throughput ({@code iperf3}) between real processes in the pods' network namespaces; the
 * intruder check that proves the policies were enforced while measuring; a table and JSON.
 *
 * <p>{@link io.npmagent.pipelines.datapath.DatapathMain} reads the options and loops over the points,
 * {@code DatapathRun} measures one, {@code BenchManifests} writes its directory, {@code BenchSandbox}
 * owns its sandbox and processes (and removes them, also on Ctrl-C).
 */
package io.npmagent.pipelines.datapath;
