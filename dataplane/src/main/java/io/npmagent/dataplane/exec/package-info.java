/** Running the kernel tools: {@link io.npmagent.dataplane.exec.CommandRunner} is the only way a process starts. */
package io.npmagent.dataplane.exec;
