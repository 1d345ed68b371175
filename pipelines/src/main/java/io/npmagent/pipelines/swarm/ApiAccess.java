package io.npmagent.pipelines.swarm;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.Executor;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * How a watcher reaches the API server as the agent does: the agent's kubeconfig (its ServiceAccount's
 * token, the cluster's CA), TLS and HTTP/2 (what client-java's OkHttp negotiates), and its User-Agent.
 * Every {@link #newClient} is a new connection: each watcher is a node's agent, with a TCP connection and
 * TLS session of its own.
 */
final class ApiAccess {
    final URI server;
    private final String token;
    private final String userAgent;
    private final SSLContext tls;

    private ApiAccess(URI server, String token, String userAgent, SSLContext tls) {
        this.server = server;
        this.token = token;
        this.userAgent = userAgent;
        this.tls = tls;
    }

    /** From a kubeconfig with embedded CA data and a bearer token, as {@code AgentIdentity} writes the agent's. */
    static ApiAccess fromKubeconfig(String kubeconfig, String userAgent) {
        String server = field(kubeconfig, "server:");
        String ca = field(kubeconfig, "certificate-authority-data:");
        String token = field(kubeconfig, "token:");
        try {
            KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
            trust.load(null, null);
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509")
                    .generateCertificate(new ByteArrayInputStream(Base64.getDecoder().decode(ca))));
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            SSLContext tls = SSLContext.getInstance("TLS");
            tls.init(null, tmf.getTrustManagers(), null);
            return new ApiAccess(URI.create(server), token, userAgent, tls);
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("the agent's kubeconfig's CA does not load", e);
        }
    }

    private static String field(String kubeconfig, String key) {
        for (String line : kubeconfig.split("\n")) {
            String t = line.trim();
            if (t.startsWith(key)) {
                return t.substring(key.length()).trim();
            }
        }
        throw new IllegalArgumentException("the kubeconfig has no " + key);
    }

    static final String JSON = "application/json";
    static final String PROTOBUF = "application/vnd.kubernetes.protobuf";

    HttpClient newClient(Executor executor) {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).sslContext(tls).executor(executor)
                .connectTimeout(Duration.ofSeconds(30)).build();
    }

    HttpRequest get(String pathAndQuery, String accept) {
        return HttpRequest.newBuilder(server.resolve(pathAndQuery)).header("Authorization", "Bearer " + token)
                // okhttp, under client-java, asks for gzip on every request (and inflates what comes back): the API
                // server then compresses every list page and GET over 128 KB, which costs it CPU.
                .header("Accept", accept).header("Accept-Encoding", "gzip").header("User-Agent", userAgent).GET().build();
    }
}
