package io.npmagent.pipelines.scale;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The scale pipeline measures the agent as the DaemonSet runs it: the same limit, heap share and collector. */
class AgentProcessTest {
    private static final Path DAEMONSET = Path.of("..", "npm-agent", "deploy", "daemonset.yaml");

    @Test
    void theAgentsJvmIsTheDaemonSets() throws IOException {
        String manifest = Files.readString(DAEMONSET);
        Matcher options = Pattern.compile("name: JAVA_TOOL_OPTIONS\\s+value: \"([^\"]*)\"").matcher(manifest);
        assertThat(options.find()).as("JAVA_TOOL_OPTIONS in %s", DAEMONSET).isTrue();
        Matcher limit = Pattern.compile("limits:\\s+cpu: \\S+\\s+memory: (\\d+)Mi").matcher(manifest);
        assertThat(limit.find()).as("a memory limit in %s", DAEMONSET).isTrue();

        assertThat(AgentProcess.DAEMONSET_JVM).contains("-XX:MaxRAM=" + limit.group(1) + "m");
        for (String option : AgentProcess.DAEMONSET_JVM) {
            if (!option.startsWith("-XX:MaxRAM=")) {
                assertThat(options.group(1).split(" ")).as("the DaemonSet's JAVA_TOOL_OPTIONS").contains(option);
            }
        }
        assertThat(options.group(1).split(" ")).filteredOn(o -> o.startsWith("-XX:MaxRAMPercentage=") || o.startsWith("-XX:+Use") && o.endsWith("GC"))
                .as("every heap and collector option of the DaemonSet is measured").isSubsetOf(AgentProcess.DAEMONSET_JVM);
    }
}
