package io.npmagent.harness.controlplane;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;

/**
 * Kubeconfig files for one control plane, with everything embedded (a copied file still works): the
 * server and its CA, and either a client certificate or a bearer token.
 */
final class Kubeconfig {
    private Kubeconfig() {}

    static Path withCertificate(Path file, String server, Path ca, Path cert, Path key) throws IOException {
        return write(file, server, ca, "    client-certificate-data: " + b64(cert) + "\n    client-key-data: " + b64(key) + "\n");
    }

    static Path withToken(Path file, String server, Path ca, String token) throws IOException {
        return write(file, server, ca, "    token: " + token + "\n");
    }

    private static Path write(Path file, String server, Path ca, String user) throws IOException {
        String text = "apiVersion: v1\nkind: Config\n"
                + "clusters:\n- name: npm-agent\n  cluster:\n    server: " + server + "\n    certificate-authority-data: " + b64(ca) + "\n"
                + "users:\n- name: user\n  user:\n" + user
                + "contexts:\n- name: npm-agent\n  context:\n    cluster: npm-agent\n    user: user\n"
                + "current-context: npm-agent\n";
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-------"));
        Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        return file;
    }

    private static String b64(Path file) throws IOException {
        return Base64.getEncoder().encodeToString(Files.readAllBytes(file));
    }
}
