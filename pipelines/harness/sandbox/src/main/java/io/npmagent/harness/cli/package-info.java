/**
 * {@code npm-agent sandbox ...}: the harness's commands, added to the agent's command line by
 * {@link io.npmagent.harness.cli.HarnessMain} (what {@code npm-agent/bin/npm-agent} runs from a checkout).
 */
package io.npmagent.harness.cli;
