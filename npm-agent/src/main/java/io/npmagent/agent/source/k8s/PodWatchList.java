package io.npmagent.agent.source.k8s;

import com.google.protobuf.ByteString;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.Pair;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ContainerPort;
import io.kubernetes.client.openapi.models.V1ListMeta;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodIP;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodStatus;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.V1;
import io.kubernetes.client.util.Watchable;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * Every pod in the cluster as a WatchList: a watch that first sends every pod as an ADDED event, then a
 * bookmark marking the end of them, read in protobuf as it streams in and slimmed pod by pod. The list is
 * the costliest thing an agent asks of the API server (every pod, on every node's start).
 *
 * <p>Not pages: kube-apiserver (v1.34) serves a next page from its watch cache by reading every object from
 * the continue key on (in pages of 2,000 a list of 100,000 pods read some 2.5 million objects and cost 5.9
 * CPU seconds), and a paged list lives as long as its last page: a hundred agents listing at once on a
 * loaded server took minutes, their continue tokens outlived etcd's compaction (every five minutes), each
 * page then answered 410 Gone, the lists started over, and none got in sync (the swarm pipeline, 100 agents
 * at 100,000 pods). Not one list request either: the server copies every pod of a whole list into the
 * answer before it encodes it, some 200 MB at 100,000 pods, for every list at once; 100 agents listing
 * so took kube-apiserver to 21 GiB and lists past the 60-s request timeout (the same pipeline). A WatchList
 * is served from the watch cache one object at a time, and as a watch it has no request timeout and no
 * continue token to expire. This is what KEP-3157 made it for; client-java's informers do not use it.
 *
 * <p>Protobuf because the server encodes a pod in it for a fraction of what JSON costs, and sends fewer
 * bytes. The watch that follows (the reflector's, from the bookmark's version) is protobuf too
 * ({@link #watch}, {@link PodWatch}): every agent receives every pod event, so its bytes are what the
 * API server writes once per node. Each pod is
 * read into a {@code V1Pod} holding what {@link SlimObjects#fields} keeps, exactly as JSON decoding would
 * have given it: protobuf writes a field JSON leaves out ({@code omitempty}) as its zero value, so an
 * empty string or a false is read as absent. {@code PodWatchListApiServerTest} holds that the model's pods
 * from both are the same.
 *
 * <p>A server that does not give a WatchList in protobuf (the WatchList feature off: 422; a proxy or a mock
 * API server that speaks only JSON) makes the agent list pods in JSON pages and watch them in JSON from
 * then on, once logged: an
 * agent that could not list would enforce nothing ({@code UnparsableObjectMockServerTest}'s mock server
 * speaks only JSON).
 */
public final class PodWatchList implements PagedListerWatcher.WholeLister<V1PodList>, PagedListerWatcher.ProtoWatcher<V1Pod> {
    /** What the agent's WatchList of pods asks for: protobuf, as a stream of length-prefixed frames. */
    public static final String ACCEPT = "application/vnd.kubernetes.protobuf;stream=watch";
    /** The annotation of the bookmark that ends the initial events. */
    static final String INITIAL_EVENTS_END = "k8s.io/initial-events-end";
    /** Of an error's body, at most this much is read: a Status is small. */
    private static final int MAX_ERROR_BODY = 64 * 1024;

    private static final System.Logger LOG = System.getLogger(PodWatchList.class.getName());

    private final ApiClient client;
    private final UnaryOperator<V1Pod> slim;
    private final String fieldSelector;
    private volatile boolean served = true;

    /** @param slim what each pod becomes as soon as it is read ({@link SlimObjects#pod}) */
    public PodWatchList(ApiClient client, UnaryOperator<V1Pod> slim) {
        this(client, slim, null);
    }

    /** @param fieldSelector only the pods it selects ({@code spec.nodeName=NODE}: a node's own), or null for all */
    public PodWatchList(ApiClient client, UnaryOperator<V1Pod> slim, String fieldSelector) {
        this.client = client;
        this.slim = slim;
        this.fieldSelector = fieldSelector;
    }

    /**
     * @param resourceVersion as the reflector asks: "0" (any), a version (not older than it), or ""/null (the latest).
     *                        No timeout: a WatchList is a watch, and ends when its bookmark has been read
     * @return every pod, its version the bookmark's; or null once the server has not given a WatchList in protobuf
     */
    @Override
    public V1PodList list(String resourceVersion) throws ApiException {
        List<V1Pod> items = new ArrayList<>();
        String version = listRaw(resourceVersion, raw -> items.add(slim.apply(pod(ProtoFrames.object(raw, V1.Pod.parser())))));
        return version == null ? null : new V1PodList().items(items).metadata(new V1ListMeta().resourceVersion(version));
    }

    /**
     * The WatchList as the server encoded it, each pod's bytes to {@code added} (the relay passes them on).
     *
     * @return the bookmark's version; or null once the server has not given a WatchList in protobuf
     */
    public String listRaw(String resourceVersion, Added added) throws ApiException {
        if (!served) {
            return null;
        }
        List<Pair> query = watchFrom(resourceVersion);
        query.add(new Pair("resourceVersionMatch", "NotOlderThan"));
        query.add(new Pair("sendInitialEvents", "true"));
        query.add(new Pair("watch", "true"));
        try (Response response = client.getHttpClient().newCall(request(query)).execute()) {
            if (unserved(response)) {
                return null;
            }
            // Closing the answer ends the watch: the reflector then watches from the bookmark (watch below).
            return initialEvents(response.body().byteStream(), added);
        } catch (IOException e) {
            throw new ApiException("the WatchList of pods broke off: " + e, e, 0, null);
        }
    }

    /**
     * Every pod's changes from {@code resourceVersion} on, in protobuf as the WatchList, with bookmarks (a
     * watch that ends on its timeout resumes from the last one rather than from an older event's version,
     * which etcd may have compacted meanwhile).
     *
     * @return the watch; or null once the server has not given a WatchList or watch in protobuf (then JSON)
     */
    @Override
    public Watchable<V1Pod> watch(String resourceVersion, Integer timeoutSeconds) throws ApiException {
        Response response = open(resourceVersion, timeoutSeconds);
        return response == null ? null : new PodWatch(response); // it owns the answer now, and closes it
    }

    /** What is done with each event of a watch, as the server encoded its object. */
    public interface Event {
        void event(String type, ByteString raw) throws IOException;
    }

    /**
     * The watch as the server encoded it, each event to {@code sink} (the relay passes them on), until the
     * server ends it.
     *
     * @return false once the server has not given a watch in protobuf
     * @throws ApiException the server's Status, when it sends an ERROR event (a version too old: 410)
     * @throws IOException  the stream broke off
     */
    public boolean watchRaw(String resourceVersion, Integer timeoutSeconds, Event sink) throws ApiException, IOException {
        try (Response response = open(resourceVersion, timeoutSeconds)) {
            if (response == null) {
                return false;
            }
            DataInputStream in = new DataInputStream(response.body().byteStream());
            for (Meta.WatchEvent e; (e = ProtoFrames.next(in)) != null; ) {
                if ("ERROR".equals(e.getType())) {
                    Meta.Status s = ProtoFrames.object(e.getObject().getRaw(), Meta.Status.parser());
                    throw new ApiException(said(s), s.getCode(), Map.of(), s.getMessage());
                }
                sink.event(e.getType(), e.getObject().getRaw());
            }
            return true;
        }
    }

    /** The watch's answer, open; null once the server has not given one in protobuf (then JSON). */
    private Response open(String resourceVersion, Integer timeoutSeconds) throws ApiException {
        if (!served) {
            return null;
        }
        List<Pair> query = watchFrom(resourceVersion);
        if (timeoutSeconds != null) {
            query.add(new Pair("timeoutSeconds", timeoutSeconds.toString()));
        }
        query.add(new Pair("watch", "true"));
        Response response = null;
        try {
            response = client.getHttpClient().newCall(request(query)).execute();
            if (unserved(response)) {
                response.close();
                return null;
            }
            return response;
        } catch (IOException e) {
            throw new ApiException("the watch of pods broke off: " + e, e, 0, null);
        } catch (ApiException | RuntimeException e) {
            if (response != null) {
                response.close();
            }
            throw e;
        }
    }

    /** The query both ask with first: bookmarks, the selector, and the version (none: the latest). */
    private List<Pair> watchFrom(String resourceVersion) {
        List<Pair> query = new ArrayList<>();
        query.add(new Pair("allowWatchBookmarks", "true"));
        if (fieldSelector != null) {
            query.add(new Pair("fieldSelector", fieldSelector));
        }
        if (resourceVersion != null && !resourceVersion.isEmpty()) {
            query.add(new Pair("resourceVersion", resourceVersion));
        }
        return query;
    }

    private Request request(List<Pair> query) throws ApiException {
        Map<String, String> headers = new HashMap<>(Map.of("Accept", ACCEPT));
        return client.buildRequest(client.getBasePath(), "/api/v1/pods", "GET", query, List.of(), null, headers, new HashMap<>(),
                new HashMap<>(), new String[] {"BearerToken"}, null);
    }

    /**
     * Whether the server cannot give pods in protobuf, which then holds from now on; throws the server's Status
     * for any other failure.
     */
    private boolean unserved(Response response) throws IOException, ApiException {
        String type = response.header("Content-Type", "");
        // Only a server that answered, and not in protobuf, is one that cannot give it. A refusal for load
        // (429, in plain text from priority and fairness) or any other failure is not: the request is asked
        // again in protobuf.
        if (response.code() == 422 || response.isSuccessful() && !type.startsWith("application/vnd.kubernetes.protobuf")) {
            served = false;
            LOG.log(System.Logger.Level.WARNING, "the API server gave no WatchList of pods in protobuf (HTTP {0}, {1}): pods are listed in JSON "
                    + "pages and watched in JSON from now on", response.code(), type);
            return true;
        }
        if (!response.isSuccessful()) {
            throw failure(response, response.body());
        }
        return false;
    }

    /** What is done with each pod of a WatchList, as the server encoded it. */
    public interface Added {
        void pod(ByteString raw) throws IOException;
    }

    /**
     * Reads a protobuf WatchList's frames up to the bookmark that ends its initial events, each pod's raw bytes to
     * {@code added}. The swarm's watchers read the agent's WatchList with it, counting.
     *
     * @return the bookmark's resourceVersion, to watch from
     * @throws ApiException the server's Status, when it sends an ERROR event (a version too old: 410)
     * @throws IOException  the stream broke off, or held something a WatchList does not
     */
    public static String initialEvents(InputStream stream, Added added) throws IOException, ApiException {
        DataInputStream in = new DataInputStream(stream);
        while (true) {
            Meta.WatchEvent event = ProtoFrames.next(in);
            if (event == null) {
                throw new IOException("the WatchList ended before its initial events did");
            }
            ByteString raw = event.getObject().getRaw();
            switch (event.getType()) {
                case "ADDED" -> added.pod(raw);
                case "BOOKMARK" -> {
                    Meta.ObjectMeta meta = ProtoFrames.object(raw, V1.Pod.parser()).getMetadata();
                    if ("true".equals(meta.getAnnotationsMap().get(INITIAL_EVENTS_END))) {
                        return meta.getResourceVersion();
                    }
                }
                case "ERROR" -> {
                    Meta.Status s = ProtoFrames.object(raw, Meta.Status.parser());
                    throw new ApiException(said(s), s.getCode(), Map.of(), s.getMessage());
                }
                // Before its bookmark a WatchList sends only ADDED: anything else means the stream is not what this reads.
                default -> throw new IOException("a " + event.getType() + " event among a WatchList's initial events");
            }
        }
    }

    private static String said(Meta.Status s) {
        return "the WatchList of pods: " + (s.getReason().isEmpty() ? "" : s.getReason() + ": ") + s.getMessage();
    }

    /** The server's Status when it sent one in protobuf (or JSON, or text), with the answer's code and headers (Retry-After). */
    private static ApiException failure(Response response, ResponseBody body) throws IOException {
        byte[] bytes = body == null ? new byte[0] : body.byteStream().readNBytes(MAX_ERROR_BODY);
        Map<String, List<String>> headers = response.headers().toMultimap();
        try {
            Meta.Status s = ProtoFrames.object(ByteString.copyFrom(bytes), Meta.Status.parser());
            return new ApiException(said(s), response.code(), headers, s.getMessage());
        } catch (IOException notProtobuf) {
            String text = new String(bytes, StandardCharsets.UTF_8);
            return new ApiException("the WatchList of pods: HTTP " + response.code() + " " + text, response.code(), headers, text);
        }
    }

    /** The fields {@link SlimObjects#fields} keeps, each as JSON decoding gives it. */
    static V1Pod pod(V1.Pod p) {
        Meta.ObjectMeta m = p.getMetadata();
        V1ObjectMeta meta = SlimObjects.identity(text(m.getNamespace()), text(m.getName()), text(m.getResourceVersion()));
        meta.setLabels(map(m.getLabelsMap()));
        meta.setAnnotations(map(m.getAnnotationsMap()));
        V1Pod out = new V1Pod().metadata(meta);
        if (p.hasSpec()) {
            V1.PodSpec s = p.getSpec();
            V1PodSpec spec = new V1PodSpec().nodeName(text(s.getNodeName())).hostNetwork(s.getHostNetwork() ? Boolean.TRUE : null);
            spec.setContainers(containers(s.getContainersList(), false));
            spec.setInitContainers(containers(s.getInitContainersList(), true));
            out.setSpec(spec);
        }
        if (p.hasStatus()) {
            V1.PodStatus s = p.getStatus();
            V1PodStatus status = new V1PodStatus().phase(text(s.getPhase())).podIP(text(s.getPodIP()));
            List<V1PodIP> ips = new ArrayList<>(s.getPodIPsCount());
            s.getPodIPsList().forEach(ip -> ips.add(new V1PodIP().ip(ip.getIp())));
            status.setPodIPs(ips.isEmpty() ? null : ips);
            out.setStatus(status);
        }
        return out;
    }

    private static List<V1Container> containers(List<V1.Container> containers, boolean init) {
        if (containers.isEmpty()) {
            return null;
        }
        List<V1Container> out = new ArrayList<>(containers.size());
        for (V1.Container c : containers) {
            V1Container container = new V1Container().name(c.getName());
            if (init && c.hasRestartPolicy()) {
                container.setRestartPolicy(c.getRestartPolicy());
            }
            List<V1ContainerPort> ports = new ArrayList<>(c.getPortsCount());
            for (V1.ContainerPort port : c.getPortsList()) {
                ports.add(new V1ContainerPort().name(text(port.getName())).containerPort(port.getContainerPort()).protocol(text(port.getProtocol())));
            }
            container.setPorts(ports.isEmpty() ? null : ports);
            out.add(container);
        }
        return out;
    }

    /** JSON leaves an empty string out; protobuf writes it. */
    private static String text(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    private static Map<String, String> map(Map<String, String> m) {
        return m.isEmpty() ? null : m;
    }
}
