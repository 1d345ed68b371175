package io.npmagent.agent.deploy;

import io.npmagent.harness.controlplane.KubeBinaries;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** promtool ({@code pipelines/kube-binaries promtool}) run in a directory, its output and exit code. */
record Promtool(int exit, String output) {
    static Promtool run(Path in, String... args) throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(List.of(KubeBinaries.onRequest("promtool").toString()));
        argv.addAll(List.of(args));
        Process p = new ProcessBuilder(argv).directory(in.toFile()).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile())).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Promtool(p.waitFor(), out);
    }
}
