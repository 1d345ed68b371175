package io.npmagent.harness.image;

import static org.assertj.core.api.Assertions.assertThat;

import io.npmagent.agent.deploy.DeployManifests;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The agent's image holds the agent and nothing that builds test nodes. It lists every class of every
 * jar {@code npm-agent/image/build} copies into the image (its {@code copies}: the agent's jar and
 * {@code target/lib}, as the Maven build left them before this module's tests) and fails on any class of
 * the harness or of the packages the harness replaced. Runs after npm-agent is packaged (Maven's
 * reactor: npm-agent, then this module), so the jars are the ones the image gets.
 */
class AgentImageTest {
    /** The harness's packages, and the agent's old homes of the sandbox and the control plane. */
    static final List<String> HARNESS_PACKAGES = List.of("io/npmagent/harness/", "io/npmagent/agent/sandbox/", "io/npmagent/agent/cluster/");

    @Test
    void theImageHoldsNoHarnessClass() throws IOException {
        Path root = DeployManifests.repositoryRoot();
        List<Path> jars = new ArrayList<>();
        for (String copy : DeployManifests.imageBuild().words("copies")) {
            Path source = root.resolve(copy.split(":", 2)[0]);
            if (source.toString().endsWith(".jar")) {
                assertThat(source).as("the image's jar (npm-agent's package phase makes it)").isRegularFile();
                jars.add(source);
            } else if (Files.isDirectory(source)) {
                try (Stream<Path> files = Files.list(source)) {
                    files.filter(f -> f.toString().endsWith(".jar")).forEach(jars::add);
                }
            }
        }
        assertThat(jars).as("the image's jars").anyMatch(j -> j.getFileName().toString().equals("npm-agent.jar"))
                .anyMatch(j -> j.getFileName().toString().startsWith("bpf-"));

        List<String> classes = new ArrayList<>();
        for (Path jar : jars) {
            classes.addAll(classesIn(jar));
        }
        assertThat(classes).as("classes in the image's jars").contains("io/npmagent/agent/cli/Main.class");
        assertThat(harnessClasses(classes)).as("harness classes in the image (pipelines/harness/README.md: never in the image)").isEmpty();
    }

    /** The check above would find the harness: it finds it in the harness's own classes. */
    @Test
    void theCheckFindsHarnessClassesWhereTheyAre() throws IOException {
        Path harnessClasses = Path.of("target/classes");
        List<String> classes;
        try (Stream<Path> files = Files.walk(harnessClasses)) {
            classes = files.filter(f -> f.toString().endsWith(".class")).map(f -> harnessClasses.relativize(f).toString()).toList();
        }
        assertThat(harnessClasses(classes)).contains("io/npmagent/harness/sandbox/Sandbox.class", "io/npmagent/harness/cli/HarnessMain.class");
    }

    static List<String> harnessClasses(List<String> classes) {
        return classes.stream().filter(c -> HARNESS_PACKAGES.stream().anyMatch(c::startsWith)).toList();
    }

    private static List<String> classesIn(Path jar) throws IOException {
        try (JarFile file = new JarFile(jar.toFile())) {
            return file.stream().map(e -> e.getName()).filter(n -> n.endsWith(".class")).toList();
        }
    }
}
