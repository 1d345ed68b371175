package io.npmagent.agent.cli;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.SSLUtils;
import io.npmagent.agent.relay.Callers;
import io.npmagent.agent.relay.PodFeed;
import io.npmagent.agent.relay.PodUpstream;
import io.npmagent.agent.relay.RelayServer;
import io.npmagent.agent.source.k8s.KubeClients;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import javax.net.ssl.SSLContext;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code npm-agent relay}: every pod of the cluster, read once from the API server and served to the node
 * agents (npm-agent/README.md, "Design, being built"). TLS with the given certificate; callers must present
 * a token the API server vouches for as one of {@code --agent-user}. Runs until stopped.
 */
@Command(name = "relay", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Serve every pod of the cluster to the node agents from one read of the API server.")
final class RelayCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--kubeconfig", paramLabel = "FILE", description = "Reach the API server with this kubeconfig "
            + "(default: the pod's service account, else $KUBECONFIG or ~/.kube/config).")
    Path kubeconfig;

    @Option(names = "--listen", paramLabel = "HOST:PORT", defaultValue = "0.0.0.0:10093", description = "Where agents reach the relay (default: ${DEFAULT-VALUE}).")
    String listen;

    @Option(names = "--tls-cert", paramLabel = "FILE", required = true, description = "The relay's serving certificate (PEM).")
    Path cert;

    @Option(names = "--tls-key", paramLabel = "FILE", required = true, description = "Its private key (PEM: PKCS#1, PKCS#8 or EC).")
    Path key;

    @Option(names = "--agent-user", paramLabel = "USER", split = ",", defaultValue = "system:serviceaccount:kube-system:npm-agent",
            description = "Who may read the relay, as the API server names a token's user (default: ${DEFAULT-VALUE}).")
    List<String> users;

    @Option(names = "--window", paramLabel = "N", defaultValue = "100000",
            description = "Changes a watch can resume across; older is 410 Gone and a new WatchList (default: ${DEFAULT-VALUE}).")
    int window;

    @Option(names = "--queue", paramLabel = "N", defaultValue = "10000",
            description = "Changes an agent may fall behind before it is cut off and resumes (default: ${DEFAULT-VALUE}).")
    int queue;

    @Override
    public Integer call() throws IOException, InterruptedException {
        int colon = listen.lastIndexOf(':');
        InetSocketAddress at;
        SSLContext tls;
        try {
            at = new InetSocketAddress(listen.substring(0, colon), Integer.parseInt(listen.substring(colon + 1)));
            tls = SSLContext.getInstance("TLS");
            byte[] keyPem = Files.readAllBytes(key);
            tls.init(SSLUtils.keyManagers(Files.readAllBytes(cert), keyPem, SSLUtils.recognizePrivateKeyAlgo(keyPem), "", null, null), null, null);
        } catch (IndexOutOfBoundsException | IllegalArgumentException e) {
            spec.commandLine().getErr().println("npm-agent relay: --listen " + listen + ": expected HOST:PORT");
            return ExitCodes.USAGE;
        } catch (GeneralSecurityException | IOException e) {
            spec.commandLine().getErr().println("npm-agent relay: --tls-cert " + cert + ", --tls-key " + key + ": " + e.getMessage());
            return ExitCodes.USAGE;
        }
        ApiClient client = KubeClients.connect(kubeconfig);
        PodFeed feed = new PodFeed(window, queue);
        PodUpstream upstream = new PodUpstream(client, feed);
        HttpsServer server = HttpsServer.create(at, 0);
        server.setHttpsConfigurator(new HttpsConfigurator(tls));
        try (RelayServer relay = new RelayServer(server, feed, new Callers(client, Set.copyOf(users)))) {
            spec.commandLine().getOut().printf("npm-agent relay: serving pods at https://%s:%d to %s%n", at.getHostString(), relay.port(),
                    String.join(", ", users));
            spec.commandLine().getOut().flush();
            upstream.run(); // until the process is stopped
        }
        return ExitCodes.OK;
    }
}
