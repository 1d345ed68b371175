package io.npmagent.pipelines.upstream;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.npmagent.dataplane.exec.CommandResult;
import io.npmagent.harness.cluster.Cluster;
import io.npmagent.harness.cluster.Node;
import io.npmagent.harness.controlplane.ControlPlane;
import io.npmagent.harness.process.Daemon;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.concurrent.Executors;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A mutating admission webhook for the pods of network-policy-api's conformance suite, served by this JVM while
 * the suite runs, so that the suite runs unmodified on a kernel without SCTP sockets: what it changes is
 * {@link CnpPodMutation} (SCTP-only servers become {@code agnhost pause}; an agnhost container with no command gets
 * upstream's image CMD), every change written to a record file, one line each.
 *
 * <p>Scope: CREATE of pods in the suite's five namespaces ({@link #NAMESPACES}, by
 * {@code kubernetes.io/metadata.name}), nothing else; {@code failurePolicy: Fail}, so a webhook that cannot be
 * reached stops the suite's pods rather than letting them crash unnoticed. The StatefulSets themselves, the
 * policies and the probes are the suite's own.
 *
 * <p>Path: the API server runs in the first node's network namespace, which no interface joins to the host's;
 * as the sandbox's kube-proxy reaches the API server, a socat pair joined by a Unix socket carries it: one in the
 * node on 127.0.0.1:PORT (the webhook's URL), one on the host to this server on 127.0.0.1:PORT. Both sit in the
 * node's cgroup, so {@code pipelines/cluster down} stops them if this JVM does not.
 *
 * <p>TLS: a self-signed certificate for 127.0.0.1 made in memory at start (RSA 2048, BouncyCastle, as the
 * harness's Pki makes the cluster's), given to the API server as the webhook's caBundle.
 */
final class CnpWebhook implements AutoCloseable {
    static final String NAME = "npm-agent-cnp-conformance";
    /** The suite's namespaces (its base manifests; the suite's Setup waits for their StatefulSets). */
    static final List<String> NAMESPACES = List.of("network-policy-conformance-gryffindor", "network-policy-conformance-slytherin",
            "network-policy-conformance-hufflepuff", "network-policy-conformance-ravenclaw", "network-policy-conformance-forbidden-forrest");

    private final Cluster cluster;
    private final HttpsServer server;
    private final Path record;
    private final List<Daemon> bridges = new ArrayList<>();

    private CnpWebhook(Cluster cluster, HttpsServer server, Path record) {
        this.cluster = cluster;
        this.server = server;
        this.record = record;
    }

    /** Serves, bridges and registers the webhook on {@code cluster}; its changes go to {@code record}. */
    static CnpWebhook start(Cluster cluster, Path record) throws IOException {
        Files.deleteIfExists(record);
        Files.createFile(record);
        int port = ControlPlane.freePort();
        Tls tls = Tls.create();
        HttpsServer server = HttpsServer.create(new InetSocketAddress("127.0.0.1", port), 64);
        server.setHttpsConfigurator(new HttpsConfigurator(tls.context()));
        server.setExecutor(Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "cnp-webhook");
            t.setDaemon(true);
            return t;
        }));
        CnpWebhook w = new CnpWebhook(cluster, server, record);
        server.createContext("/mutate", w::handle);
        server.start();
        try {
            w.bridge(port);
            cluster.must(List.of(cluster.bin("kubectl").toString(), "--kubeconfig", cluster.config().adminKubeconfig().toString(), "apply", "-f", "-"),
                    configuration("https://127.0.0.1:" + port + "/mutate", tls.caBundle()));
        } catch (IOException | RuntimeException e) {
            w.close();
            throw e;
        }
        return w;
    }

    /** The MutatingWebhookConfiguration, as JSON (kubectl apply reads it). */
    static String configuration(String url, String caBundle) {
        String namespaces = String.join(",", NAMESPACES.stream().map(n -> "\"" + n + "\"").toList());
        return """
                {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
                 "metadata": {"name": "%s"},
                 "webhooks": [{"name": "sctp-servers.cnp-conformance.npm-agent.io",
                   "clientConfig": {"url": "%s", "caBundle": "%s"},
                   "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "scope": "Namespaced"}],
                   "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": [%s]}]},
                   "failurePolicy": "Fail", "sideEffects": "None", "admissionReviewVersions": ["v1"], "timeoutSeconds": 10,
                   "reinvocationPolicy": "Never", "matchPolicy": "Equivalent"}]}
                """.formatted(NAME, url, caBundle, namespaces);
    }

    /** The AdmissionReview answering {@code review}: allowed, with the patch if there is one. */
    static JsonObject answer(JsonObject review, CnpPodMutation.Result result) {
        JsonObject response = new JsonObject();
        response.addProperty("uid", review.getAsJsonObject("request").get("uid").getAsString());
        response.addProperty("allowed", true);
        if (!result.patch().isEmpty()) {
            response.addProperty("patchType", "JSONPatch");
            response.addProperty("patch", Base64.getEncoder().encodeToString(result.patchJson().toString().getBytes(StandardCharsets.UTF_8)));
        }
        JsonObject out = new JsonObject();
        out.addProperty("apiVersion", "admission.k8s.io/v1");
        out.addProperty("kind", "AdmissionReview");
        out.add("response", response);
        return out;
    }

    private void handle(HttpExchange exchange) throws IOException {
        byte[] body;
        try (InputStream in = exchange.getRequestBody()) {
            body = in.readAllBytes();
        }
        byte[] reply;
        int code = 200;
        try {
            JsonObject review = JsonParser.parseString(new String(body, StandardCharsets.UTF_8)).getAsJsonObject();
            CnpPodMutation.Result result = CnpPodMutation.of(review.getAsJsonObject("request").getAsJsonObject("object"));
            note(result.changes());
            reply = answer(review, result).toString().getBytes(StandardCharsets.UTF_8);
        } catch (RuntimeException e) {
            // Not an AdmissionReview we can read: the API server fails the request (failurePolicy Fail), and the record says why.
            note(List.of("unreadable admission request: " + e));
            code = 400;
            reply = ("unreadable admission request: " + e.getMessage()).getBytes(StandardCharsets.UTF_8);
        }
        exchange.getResponseHeaders().set("Content-Type", code == 200 ? "application/json" : "text/plain");
        exchange.sendResponseHeaders(code, reply.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(reply);
        }
    }

    private synchronized void note(List<String> lines) throws IOException {
        if (!lines.isEmpty()) {
            Files.write(record, lines.stream().map(l -> Instant.now() + " " + l).toList(), StandardOpenOption.APPEND);
        }
    }

    /** The socat pair from the first node's 127.0.0.1:PORT to this server; returns once a connection gets through. */
    private void bridge(int port) throws IOException {
        Node node = cluster.first();
        Path socket = cluster.config().state().resolve("cnp-webhook.sock");
        Files.deleteIfExists(socket);
        Path log = cluster.log(node, "cnp-webhook-bridge");
        bridges.add(Daemon.of("cnp-webhook-bridge (host)", log, List.of("socat", "UNIX-LISTEN:" + socket + ",fork,mode=600",
                "TCP:127.0.0.1:" + port)).inCgroup(node.cgroup()).detached().start());
        bridges.add(Daemon.of("cnp-webhook-bridge (" + node.name() + ")", log, List.of("socat",
                "TCP-LISTEN:" + port + ",bind=127.0.0.1,fork,reuseaddr", "UNIX-CONNECT:" + socket)).inCgroup(node.cgroup()).inNetns(node.netns())
                .detached().start());
        Instant deadline = Instant.now().plusSeconds(20);
        while (true) {
            // Through both socats to this server, TLS and all: a path it does not serve answers 404.
            CommandResult r = cluster.run(List.of("ip", "netns", "exec", node.netns(), "curl", "-sk", "-m", "3", "-o", "/dev/null",
                    "-w", "%{http_code}", "https://127.0.0.1:" + port + "/"));
            if (r.ok() && r.stdout().strip().equals("404")) {
                return;
            }
            if (Instant.now().isAfter(deadline)) {
                throw new IOException("the webhook's bridge into " + node.name() + " does not answer on 127.0.0.1:" + port + " (see " + log + ")");
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }
    }

    /** The configuration removed, the bridges and the server stopped. */
    @Override
    public void close() {
        cluster.run(List.of(cluster.bin("kubectl").toString(), "--kubeconfig", cluster.config().adminKubeconfig().toString(), "delete",
                "mutatingwebhookconfiguration", NAME, "--ignore-not-found"));
        bridges.forEach(d -> d.stop(Duration.ofSeconds(2)));
        server.stop(0);
    }

    /** The server's TLS context and the PEM its clients trust, base64 (a caBundle). */
    private record Tls(SSLContext context, String caBundle) {
        static Tls create() throws IOException {
            try {
                KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
                g.initialize(2048);
                KeyPair key = g.generateKeyPair();
                X500Name name = new X500Name("CN=" + NAME);
                Instant now = Instant.now();
                JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(name, BigInteger.valueOf(now.toEpochMilli()),
                        Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(2))), name, key.getPublic());
                b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
                b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
                b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName(GeneralName.iPAddress, "127.0.0.1")));
                X509Certificate cert = new JcaX509CertificateConverter()
                        .getCertificate(b.build(new JcaContentSignerBuilder("SHA256withRSA").build(key.getPrivate())));
                char[] password = "cnp-webhook".toCharArray();
                KeyStore store = KeyStore.getInstance("PKCS12");
                store.load(null, null);
                store.setKeyEntry("webhook", key.getPrivate(), password, new Certificate[] {cert});
                KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(store, password);
                SSLContext context = SSLContext.getInstance("TLS");
                context.init(kmf.getKeyManagers(), null, null);
                String pem = "-----BEGIN CERTIFICATE-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(cert.getEncoded())
                        + "\n-----END CERTIFICATE-----\n";
                return new Tls(context, Base64.getEncoder().encodeToString(pem.getBytes(StandardCharsets.US_ASCII)));
            } catch (GeneralSecurityException | org.bouncycastle.operator.OperatorCreationException | IOException e) {
                throw new IOException("cannot make the webhook's certificate: " + e.getMessage(), e);
            }
        }
    }
}
