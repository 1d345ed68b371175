/**
 * Upstream's NetworkPolicy suites on the real node ({@code pipelines/upstream-suites}): the script runs
 * e2e.test and cyclonus per backend and keeps their raw logs and JUnit reports; this package reads those
 * reports into one JSON document and a table.
 *
 * <p>{@link io.npmagent.pipelines.upstream.UpstreamSuitesMain} reads the options, {@code JUnitReport}
 * counts one report (which specs are ours, which failed and why), {@code CyclonusLog} finds a cyclonus
 * failure's reason in its log, {@code CyclonusRounds} reads every probe round's tables and times from it,
 * {@code ConntrackReplies} the replies the node's conntrack saw meanwhile, {@code KernelCheck} holds the one
 * against the other (a wrong probe the network never answered is the harness, not the dataplane),
 * {@code SuitesTable} prints. network-policy-api's ClusterNetworkPolicy suite ({@code --suite cnp}):
 * {@code CnpWebhook} serves the admission webhook that lets it run on a kernel without SCTP, {@code CnpPodMutation}
 * is what that webhook changes in a pod, {@code CnpLog} counts its Go test log (SCTP probes as not run).
 */
package io.npmagent.pipelines.upstream;
