/**
 * The {@code npm-agent} command line (picocli): {@link io.npmagent.agent.cli.Main} and one class per
 * subcommand. Commands print to picocli's out and err writers, so tests run them in process.
 */
package io.npmagent.agent.cli;
