package io.npmagent.harness.controlplane;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.IOException;
import java.io.Reader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import io.npmagent.harness.process.Daemon;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real Kubernetes control plane on loopback, in a directory of its own: etcd, kube-apiserver
 * (RBAC and Node authorization, service-account token signing, the admission plugins it enables by
 * default) and kube-controller-manager (the controllers a node agent's world needs: service accounts,
 * namespace deletion, EndpointSlices, garbage collection). Ports are picked free at start, so several
 * run side by side. The binaries are upstream's ({@link KubeBinaries}).
 *
 * <p>Its directory holds {@code pki/} (CA, serving and client certificates, the token signing key),
 * {@code etcd/} (data), {@code logs/} and {@code admin.kubeconfig} (user {@code npm-agent-admin} in
 * {@code system:masters}). Every process's command line names the directory, which is how
 * {@code sandbox down} finds what a killed daemon left behind.
 */
public final class ControlPlane implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ControlPlane.class.getName());
    /** ClusterIPs for Services, both families, as kube-proxy and the agent's Service tests expect. */
    public static final String SERVICE_CIDRS = "10.96.0.0/16,fd00:10:96::/112";
    private static final Duration READY = Duration.ofSeconds(90);

    private final Path dir;
    private final Pki pki;
    private final int etcdPort;
    private final int apiPort;
    private final String advertise;
    private final Shape shape;
    private final List<Daemon> processes = new ArrayList<>();
    private Daemon etcd;
    private Daemon apiserver;
    private Duration startup;
    private final HttpClient http = HttpClient.newHttpClient();
    private final java.util.Map<String, okhttp3.OkHttpClient> statusClients = new java.util.HashMap<>();

    /**
     * GOMAXPROCS follows the process's CPU affinity when it changes. Go 1.25's runtime does this by
     * default, but only for a main module that declares go 1.25; Kubernetes v1.34 and etcd v3.6 declare
     * 1.24, so without this GOMAXPROCS stays at the cores seen at start. A pipeline that pins the control
     * plane to one core (the swarm) would then run it with two Ps on one core, as no server of one core
     * runs, and its figures would be another machine's (pipelines/README.md: "The API server's GOMAXPROCS").
     */
    private static final String FOLLOW_CPU_AFFINITY = "updatemaxprocs=1";

    private ControlPlane(Path dir, Pki pki, int etcdPort, int apiPort, String advertise, Shape shape) {
        this.dir = dir;
        this.pki = pki;
        this.etcdPort = etcdPort;
        this.apiPort = apiPort;
        this.advertise = advertise;
        this.shape = shape;
    }

    /**
     * Where the API server listens and which controllers run: a test's control plane on loopback with the
     * controllers an agent's world needs, or a cluster's (pipelines/cluster), run inside its first
     * node's network namespace, listening on the node's addresses at a fixed port, with every default
     * controller (DaemonSets, ReplicaSets, pod garbage collection, node IPAM, ...) and the scheduler.
     */
    public record Shape(String bindAddress, int apiPort, String controllers, boolean scheduler, String podCidrs) {
        static final Shape LOOPBACK = new Shape("127.0.0.1", 0,
                "serviceaccount,namespace,endpointslice,endpointslicemirroring,garbagecollector,root-ca-cert-publisher", false, "");

        /**
         * A cluster's control plane: every address of its namespace, {@code port}, all default controllers, a
         * scheduler, and each node given a /24 and a /64 of {@code podCidrs} (IPv4,IPv6) by the controller manager.
         */
        public static Shape cluster(int port, String podCidrs) {
            return new Shape("0.0.0.0", port, "*", true, podCidrs);
        }

        List<String> nodeCidrFlags() {
            return podCidrs.isEmpty() ? List.of() : List.of("--allocate-node-cidrs=true", "--cluster-cidr=" + podCidrs,
                    "--node-cidr-mask-size-ipv4=24", "--node-cidr-mask-size-ipv6=64");
        }
    }

    /**
     * Starts etcd, kube-apiserver and kube-controller-manager in {@code dir} (made if missing) and returns
     * once the API server is ready (its {@code /readyz}: storage, RBAC's bootstrap roles, the
     * service-account issuer) and the controller manager runs.
     *
     * @param advertise the address the API server advertises in the {@code kubernetes} Service (a node's
     *                  address; loopback when nothing outside this machine's namespaces needs it)
     */
    public static ControlPlane start(Path dir, String advertise) throws IOException {
        return start(dir, advertise, Shape.LOOPBACK);
    }

    /** {@link #start(Path, String)} in the given shape. */
    public static ControlPlane start(Path dir, String advertise, Shape shape) throws IOException {
        Instant t0 = Instant.now();
        Path bin = KubeBinaries.dir();
        Files.createDirectories(dir);
        Pki pki = Pki.create(dir.resolve("pki"));
        pki.server("apiserver", "kube-apiserver", List.of("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local"), List.of("127.0.0.1", "10.96.0.1", advertise));
        pki.client("admin", "npm-agent-admin", "system:masters");
        pki.client("controller-manager", "system:kube-controller-manager", null);
        pki.client("kube-proxy", "system:kube-proxy", null);
        pki.client("kube-scheduler", "system:kube-scheduler", null);
        // What the API server shows the kubelets it calls (logs, exec, port-forward).
        pki.client("apiserver-kubelet-client", "kube-apiserver-kubelet-client", "system:masters");
        pki.signingKey("service-account");
        ControlPlane cp = new ControlPlane(dir, pki, freePort(), shape.apiPort() > 0 ? shape.apiPort() : freePort(), advertise, shape);
        try {
            cp.startEtcd(bin);
            cp.startApiServer(bin);
            Path cmConfig = cp.certificateKubeconfig("controller-manager");
            List<String> cmArgv = new ArrayList<>(List.of(bin.resolve("kube-controller-manager").toString(),
                    "--kubeconfig=" + cmConfig, "--authentication-kubeconfig=" + cmConfig,
                    "--authorization-kubeconfig=" + cmConfig,
                    "--bind-address=127.0.0.1", "--secure-port=0", "--leader-elect=false",
                    "--controllers=" + shape.controllers(),
                    "--use-service-account-credentials=true",
                    "--service-account-private-key-file=" + pki.file("service-account.key"), "--root-ca-file=" + pki.ca(),
                    "--service-cluster-ip-range=" + SERVICE_CIDRS, "--v=1"));
            cmArgv.addAll(shape.nodeCidrFlags());
            cp.processes.add(Daemon.of("kube-controller-manager", dir.resolve("logs/kube-controller-manager.log"), cmArgv).start());
            cp.certificateKubeconfig("admin");
            if (shape.scheduler()) {
                Path schedConfig = cp.certificateKubeconfig("kube-scheduler");
                cp.processes.add(Daemon.of("kube-scheduler", dir.resolve("logs/kube-scheduler.log"), List.of(bin.resolve("kube-scheduler").toString(),
                        "--kubeconfig=" + schedConfig, "--authentication-kubeconfig=" + schedConfig,
                        "--authorization-kubeconfig=" + schedConfig, "--bind-address=127.0.0.1", "--secure-port=0",
                        "--leader-elect=false", "--v=1")).start());
            }
            // The controller manager works once it has given the default namespace its ServiceAccount.
            Daemon cm = cp.processes.get(cp.processes.size() - 1);
            cp.await(cm, () -> {
                try {
                    return cp.adminStatus("/api/v1/namespaces/default/serviceaccounts/default") == 200;
                } catch (IOException e) {
                    return false;
                }
            }, "kube-controller-manager (the default ServiceAccount)");
            cp.startup = Duration.between(t0, Instant.now());
            LOG.log(System.Logger.Level.INFO, "control plane {0} ({1}) ready in {2} ms at {3}", dir, cp.version(), cp.startup.toMillis(), cp.server());
            return cp;
        } catch (IOException | RuntimeException e) {
            cp.close();
            throw e;
        }
    }

    private void startEtcd(Path bin) throws IOException {
        int peer = freePort();
        // --unsafe-no-fsync: a throw-away cluster for tests and sandboxes, where fsync only costs time.
        etcd = Daemon.of("etcd", dir.resolve("logs/etcd.log"), List.of(bin.resolve("etcd").toString(), "--name=npm-agent", "--data-dir=" + dir.resolve("etcd"),
                "--listen-client-urls=http://127.0.0.1:" + etcdPort, "--advertise-client-urls=http://127.0.0.1:" + etcdPort,
                "--listen-peer-urls=http://127.0.0.1:" + peer, "--initial-advertise-peer-urls=http://127.0.0.1:" + peer,
                "--initial-cluster=npm-agent=http://127.0.0.1:" + peer, "--quota-backend-bytes=8589934592",
                "--unsafe-no-fsync", "--log-level=warn")).env("GODEBUG", FOLLOW_CPU_AFFINITY).start();
        processes.add(etcd);
        await(etcd, () -> get("http://127.0.0.1:" + etcdPort + "/health").contains("\"health\":\"true\""), "etcd /health");
    }

    private void startApiServer(Path bin) throws IOException {
        apiserver = apiServer(bin, apiPort, "kube-apiserver");
    }

    private Daemon apiServer(Path bin, int port, String name) throws IOException {
        Daemon p = Daemon.of(name, dir.resolve("logs/" + name + ".log"), List.of(bin.resolve("kube-apiserver").toString(),
                "--etcd-servers=http://127.0.0.1:" + etcdPort, "--bind-address=" + shape.bindAddress(), "--secure-port=" + port,
                "--advertise-address=" + advertise, "--cert-dir=" + dir.resolve("pki"),
                "--tls-cert-file=" + pki.file("apiserver.crt"), "--tls-private-key-file=" + pki.file("apiserver.key"),
                "--client-ca-file=" + pki.ca(), "--authorization-mode=Node,RBAC",
                "--kubelet-client-certificate=" + pki.file("apiserver-kubelet-client.crt"),
                "--kubelet-client-key=" + pki.file("apiserver-kubelet-client.key"), "--kubelet-preferred-address-types=InternalIP",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--service-account-key-file=" + pki.file("service-account.pub"),
                "--service-account-signing-key-file=" + pki.file("service-account.key"),
                "--service-cluster-ip-range=" + SERVICE_CIDRS, "--allow-privileged=true", "--profiling=false",
                "--audit-policy-file=" + auditPolicy(), "--audit-log-path=" + auditLog(), "--audit-log-format=json",
                "--event-ttl=1h", "--v=1")).env("GODEBUG", FOLLOW_CPU_AFFINITY).start();
        processes.add(p);
        String url = "https://127.0.0.1:" + port;
        await(p, () -> {
            try {
                return status(url, "/readyz") == 200;
            } catch (IOException e) {
                return false;
            }
        }, name + " /readyz");
        return p;
    }

    /**
     * An outage the agent's watches do not survive: the API server stops, {@code writes} run against a
     * second API server on the same etcd (at another address, which the agent does not know), etcd is
     * compacted at its head, and the API server starts again. The agent's next watch asks for a
     * resourceVersion etcd no longer has, and gets 410 Gone: it must relist to see the writes.
     */
    public void outageWithWrites(Writes writes) throws IOException {
        apiserver.stop();
        processes.remove(apiserver);
        int port = freePort();
        Daemon other = apiServer(KubeBinaries.dir(), port, "kube-apiserver-outage");
        try {
            Path kubeconfig = Kubeconfig.withCertificate(dir.resolve("outage.kubeconfig"), "https://127.0.0.1:" + port, pki.ca(),
                    pki.file("admin.crt"), pki.file("admin.key"));
            writes.run(kubeconfig);
        } finally {
            other.stop();
            processes.remove(other);
        }
        compactEtcd();
        startApiServer(KubeBinaries.dir());
    }

    /** What {@link #outageWithWrites} runs while the agent's API server is down: writes through the kubeconfig it is given (admin). */
    public interface Writes {
        void run(Path adminKubeconfig) throws IOException;
    }

    /** One request the audit log recorded: who asked, the verb and resource RBAC checked, the URI, the answer. */
    public record Audited(String user, String verb, String group, String resource, String subresource, String uri, int code) {}

    /**
     * Every completed request of the agent's ServiceAccount so far, from the API server's audit log (the
     * policy records that user alone, at Metadata level): exactly what the authorizer judged.
     */
    public List<Audited> audited() throws IOException {
        List<Audited> out = new ArrayList<>();
        if (!Files.exists(auditLog())) {
            return out;
        }
        for (String line : Files.readAllLines(auditLog(), StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                continue;
            }
            JsonObject e = JsonParser.parseString(line).getAsJsonObject();
            if (!"ResponseComplete".equals(text(e, "stage")) && !"ResponseStarted".equals(text(e, "stage"))) {
                continue;
            }
            JsonObject ref = e.has("objectRef") ? e.getAsJsonObject("objectRef") : new JsonObject();
            int code = e.has("responseStatus") && e.getAsJsonObject("responseStatus").has("code")
                    ? e.getAsJsonObject("responseStatus").get("code").getAsInt() : 0;
            out.add(new Audited(e.getAsJsonObject("user").get("username").getAsString(), text(e, "verb"), text(ref, "apiGroup"),
                    text(ref, "resource"), text(ref, "subresource"), text(e, "requestURI"), code));
        }
        return out;
    }

    private static String text(JsonObject o, String field) {
        return o.has(field) && !o.get(field).isJsonNull() ? o.get(field).getAsString() : "";
    }

    private Path auditLog() {
        return dir.resolve("logs/audit.log");
    }

    /** The audit policy: the agent's ServiceAccount at Metadata level, nobody else (a 100,000-pod setup writes no log). */
    private Path auditPolicy() throws IOException {
        Path file = dir.resolve("audit-policy.yaml");
        if (!Files.exists(file)) {
            Files.writeString(file, "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n"
                    + "- level: Metadata\n  users: [\"system:serviceaccount:" + AgentIdentity.NAMESPACE + ":" + AgentIdentity.ACCOUNT + "\"]\n"
                    + "- level: None\n");
        }
        return file;
    }

    /** Stops the API server (every watch drops) and starts it again on the same port and storage. */
    public void restartApiServer() throws IOException {
        apiserver.stop();
        processes.remove(apiserver);
        startApiServer(KubeBinaries.dir());
    }

    /** Compacts etcd at its current revision (physically), so no watch from an earlier one can resume; returns that revision. */
    public long compactEtcd() throws IOException {
        String status = post("/v3/maintenance/status", "{}");
        long revision = JsonParser.parseString(status).getAsJsonObject().getAsJsonObject("header").get("revision").getAsLong();
        post("/v3/kv/compaction", "{\"revision\": \"" + revision + "\", \"physical\": true}");
        return revision;
    }

    public String server() {
        return "https://127.0.0.1:" + apiPort;
    }

    public int port() {
        return apiPort;
    }

    public Path dir() {
        return dir;
    }

    public Path ca() {
        return pki.ca();
    }

    public Path adminKubeconfig() {
        return dir.resolve("admin.kubeconfig");
    }

    /** How long {@link #start} took, for the figures. */
    public Duration startup() {
        return startup;
    }

    /**
     * A node's kubelet credentials: a client certificate for {@code system:node:NODE} in {@code system:nodes}
     * (what the Node authorizer admits), in {@code kubelet-NODE.kubeconfig}, for the API server at {@code server}.
     */
    public Path kubeletKubeconfig(String node, String server) throws IOException {
        String name = "kubelet-" + node;
        pki.client(name, "system:node:" + node, "system:nodes");
        return certificateKubeconfig(name, server);
    }

    /**
     * A serving certificate from the cluster's CA ({@link #ca}) for a server of the cluster's own (the pod
     * relay) at {@code ips}: {@code pki/NAME.crt} and {@code pki/NAME.key}, in that order.
     */
    public List<Path> servingCertificate(String name, List<String> ips) throws IOException {
        pki.server(name, name, List.of("localhost"), ips);
        return List.of(pki.file(name + ".crt"), pki.file(name + ".key"));
    }

    /** A kubeconfig with a new client certificate for {@code user} (no group), for the API server at {@code server}. */
    public Path userKubeconfig(String user, String server) throws IOException {
        pki.client(user, user, null);
        return certificateKubeconfig(user, server);
    }

    /** The API server at its advertised address: where the other nodes of a cluster reach it. */
    public String advertisedServer() {
        return "https://" + advertise + ":" + apiPort;
    }

    /** A kubeconfig for the client certificate {@code pki/NAME.crt} (admin, controller-manager, kube-proxy, kube-scheduler). */
    public Path certificateKubeconfig(String name) throws IOException {
        return certificateKubeconfig(name, server());
    }

    /** {@link #certificateKubeconfig(String)} for the API server at {@code server}. */
    public Path certificateKubeconfig(String name, String server) throws IOException {
        return Kubeconfig.withCertificate(dir.resolve(name + ".kubeconfig"), server, pki.ca(), pki.file(name + ".crt"), pki.file(name + ".key"));
    }

    /** A kubeconfig that logs in with a bearer token (a service account's). */
    public Path tokenKubeconfig(String name, String token) throws IOException {
        return Kubeconfig.withToken(dir.resolve(name + ".kubeconfig"), server(), pki.ca(), token);
    }

    /** A client-java client with the admin identity, for setting the cluster up; never the agent's. */
    public ApiClient admin() throws IOException {
        return client(adminKubeconfig());
    }

    public static ApiClient client(Path kubeconfig) throws IOException {
        try (Reader r = Files.newBufferedReader(kubeconfig, StandardCharsets.UTF_8)) {
            return ClientBuilder.kubeconfig(KubeConfig.loadKubeConfig(r)).build();
        }
    }

    /**
     * Waits until the controller manager has given {@code namespace} its "default" ServiceAccount: before
     * that the API server admits no pod into it (as a real cluster does right after a namespace is made).
     */
    public void awaitDefaultServiceAccount(String namespace) throws IOException {
        Instant deadline = Instant.now().plus(READY);
        String path = "/api/v1/namespaces/" + java.net.URLEncoder.encode(namespace, StandardCharsets.UTF_8) + "/serviceaccounts/default";
        while (adminStatus(path) != 200) {
            if (Instant.now().isAfter(deadline)) {
                throw new IOException("namespace " + namespace + " got no default ServiceAccount in " + READY.toSeconds() + " s");
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }
    }

    /** The API server's {@code gitVersion}, as {@code /version} reports it. */
    public String version() throws IOException {
        String body = adminGet("/version");
        JsonObject v = JsonParser.parseString(body).getAsJsonObject();
        return v.get("gitVersion").getAsString();
    }

    /** The pid of a running process of this control plane ({@code etcd}, {@code kube-apiserver}, ...). */
    public java.util.Optional<Long> pid(String name) {
        return processes.stream().filter(p -> p.name().equals(name) && p.alive()).map(Daemon::pid).findFirst();
    }

    /** The pids and logs of every process, for a status line or an error. */
    public List<String> describe() {
        return processes.stream().map(p -> p.name() + " pid " + p.pid() + (p.alive() ? "" : " (dead)") + " log " + p.log()).toList();
    }

    /** Stops every process, newest first. The directory stays. */
    @Override
    public void close() {
        for (int i = processes.size() - 1; i >= 0; i--) {
            processes.get(i).stop();
        }
        processes.clear();
    }

    private String adminGet(String path) throws IOException {
        ApiClient c = ControlPlane.client(certificateKubeconfig("admin"));
        try (okhttp3.Response r = c.getHttpClient().newCall(new okhttp3.Request.Builder().url(server() + path).build()).execute()) {
            if (r.code() != 200 || r.body() == null) {
                throw new IOException("GET " + path + ": HTTP " + r.code());
            }
            return r.body().string();
        }
    }

    private int adminStatus(String path) throws IOException {
        return status(server(), path);
    }

    /** GET {@code path} of the API server at {@code url} as admin; the status code. One client per server, made at first use. */
    private int status(String url, String path) throws IOException {
        okhttp3.OkHttpClient quick;
        synchronized (statusClients) {
            quick = statusClients.get(url);
            if (quick == null) {
                Path kubeconfig = Kubeconfig.withCertificate(dir.resolve("probe-" + statusClients.size() + ".kubeconfig"), url, pki.ca(),
                        pki.file("admin.crt"), pki.file("admin.key"));
                quick = ControlPlane.client(kubeconfig).getHttpClient().newBuilder().callTimeout(5, TimeUnit.SECONDS).build();
                statusClients.put(url, quick);
            }
        }
        try (okhttp3.Response r = quick.newCall(new okhttp3.Request.Builder().url(url + path).build()).execute()) {
            return r.code();
        }
    }

    private String get(String url) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    private String post(String path, String json) throws IOException {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + etcdPort + path))
                    .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IOException("etcd " + path + ": HTTP " + r.statusCode() + " " + r.body());
            }
            return r.body();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    private void await(Daemon p, java.util.function.BooleanSupplier ready, String what) throws IOException {
        try {
            p.awaitReady(READY, what, ready);
        } catch (IllegalStateException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    /** A free TCP port on loopback (bound and released: the caller binds it next). */
    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
