/** Running the kernel tools: {@link io.npmagent.iptables.exec.CommandRunner} is the only way a process starts. */
package io.npmagent.iptables.exec;
