package io.npmagent.agent.source.k8s;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.ExtensionRegistryLite;
import com.google.protobuf.WireFormat;
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
import io.kubernetes.client.proto.Runtime;
import io.kubernetes.client.proto.V1;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * Every pod in the cluster in one request, in protobuf, read as it streams in and slimmed pod by pod.
 * The list is the costliest thing an agent asks of the API server (every pod, on every node's start).
 *
 * <p>One request, not pages: kube-apiserver (v1.34) serves a list at a resourceVersion it may choose
 * ("0", the reflector's first list, or the version a relist names) from its watch cache in one pass, and a
 * next page by reading every object from the continue key on: in pages of 2,000 a list of 100,000 pods read
 * some 2.5 million objects and cost 5.9 CPU seconds. A paged list also lives as long as its last page, and a
 * hundred agents listing at once on a loaded server took minutes: their continue tokens outlived etcd's
 * compaction (every five minutes), each page then answered 410 Gone, the lists started over, and no agent
 * got in sync (the swarm pipeline, 100 agents at 100,000 pods). A single request cannot be cut in the
 * middle that way. Its cost in memory is the reason client-java pages: its whole-list answer is a tree of
 * full objects; here nothing but one pod at a time is held before it is slimmed.
 *
 * <p>Protobuf because the server encodes a pod in it for a fraction of what JSON costs, and sends fewer
 * bytes. Watches stay JSON (each watch event is encoded once for all watchers anyway). Each pod is read
 * into a {@code V1Pod} holding what {@link SlimObjects#fields} keeps, exactly as JSON decoding would have
 * given it: protobuf writes a field JSON leaves out ({@code omitempty}) as its zero value, so an empty
 * string or a false is read as absent. {@code ProtoPodListApiServerTest} holds that the model's pods from
 * both are the same.
 *
 * <p>A server that answers in another format (a proxy, an aggregated or mock API server that speaks only
 * JSON) makes the agent list pods in JSON pages from then on, once logged: every kube-apiserver speaks
 * protobuf for pods, and an agent that could not list would enforce nothing
 * ({@code UnparsableObjectMockServerTest}'s mock server speaks only JSON).
 */
final class ProtoPodList implements PagedListerWatcher.WholeLister<V1PodList> {
    /** What the agent's pod lists ask for; the swarm's watchers ask the same. */
    public static final String ACCEPT = "application/vnd.kubernetes.protobuf";
    /** What starts every protobuf answer of kube-apiserver, before the {@code runtime.Unknown} that wraps the object. */
    private static final byte[] MAGIC = {'k', '8', 's', 0};
    /** Of an error's body, at most this much is read: a Status is small. */
    private static final int MAX_ERROR_BODY = 64 * 1024;

    private static final System.Logger LOG = System.getLogger(ProtoPodList.class.getName());

    private final ApiClient client;
    private final UnaryOperator<V1Pod> slim;
    private volatile boolean protobuf = true;

    /** @param slim what each pod becomes as soon as it is read ({@link SlimObjects#pod}) */
    ProtoPodList(ApiClient client, UnaryOperator<V1Pod> slim) {
        this.client = client;
        this.slim = slim;
    }

    /**
     * @param resourceVersion as the reflector asks: "0" (any), a version (not older than it), or ""/null (the latest)
     * @return every pod, or null once the server has answered in something other than protobuf
     */
    @Override
    public V1PodList list(String resourceVersion, Integer timeoutSeconds) throws ApiException {
        if (!protobuf) {
            return null;
        }
        List<Pair> query = new ArrayList<>();
        if (resourceVersion != null && !resourceVersion.isEmpty()) {
            query.add(new Pair("resourceVersion", resourceVersion));
        }
        if (timeoutSeconds != null) {
            query.add(new Pair("timeoutSeconds", timeoutSeconds.toString()));
        }
        Map<String, String> headers = new HashMap<>(Map.of("Accept", ACCEPT));
        Request request = client.buildRequest(client.getBasePath(), "/api/v1/pods", "GET", query, List.of(), null, headers, new HashMap<>(),
                new HashMap<>(), new String[] {"BearerToken"}, null);
        try (Response response = client.getHttpClient().newCall(request).execute()) {
            ResponseBody body = response.body();
            if (!response.isSuccessful()) {
                throw failure(response, body);
            }
            String type = response.header("Content-Type", "");
            InputStream in = body == null ? InputStream.nullInputStream() : body.byteStream();
            if (!type.startsWith(ACCEPT) || !Arrays.equals(in.readNBytes(MAGIC.length), MAGIC)) {
                protobuf = false;
                LOG.log(System.Logger.Level.WARNING, "the API server answered a protobuf list of pods as \"{0}\": pods are listed in JSON from now on", type);
                return null;
            }
            return read(CodedInputStream.newInstance(in, 64 * 1024));
        } catch (IOException e) {
            throw new ApiException("the list of pods broke off: " + e, e, 0, null);
        }
    }

    /** The {@code runtime.Unknown} after the magic number: its {@code raw} field is the PodList, read item by item. */
    private V1PodList read(CodedInputStream in) throws IOException {
        ExtensionRegistryLite none = ExtensionRegistryLite.getEmptyRegistry();
        List<V1Pod> items = new ArrayList<>();
        Meta.ListMeta meta = null;
        boolean seen = false;
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
            if (!delimited(tag, Runtime.Unknown.RAW_FIELD_NUMBER)) {
                in.skipField(tag);
                continue;
            }
            seen = true;
            int outer = in.pushLimit(in.readRawVarint32());
            for (int t = in.readTag(); t != 0; t = in.readTag()) {
                if (delimited(t, V1.PodList.ITEMS_FIELD_NUMBER)) {
                    items.add(slim.apply(pod(in.readMessage(V1.Pod.parser(), none))));
                } else if (delimited(t, V1.PodList.METADATA_FIELD_NUMBER)) {
                    meta = in.readMessage(Meta.ListMeta.parser(), none);
                } else {
                    in.skipField(t);
                }
            }
            in.popLimit(outer);
        }
        if (!seen || meta == null) {
            throw new IOException("the API server's protobuf answer holds no list of pods");
        }
        return new V1PodList().items(items).metadata(new V1ListMeta().resourceVersion(text(meta.getResourceVersion())));
    }

    /** Whether {@code tag} opens field {@code field} as length-delimited bytes (a message, a string). */
    private static boolean delimited(int tag, int field) {
        return WireFormat.getTagFieldNumber(tag) == field && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED;
    }

    /** The server's Status when it sent one in protobuf (or JSON, or text), with the answer's code and headers (Retry-After). */
    private static ApiException failure(Response response, ResponseBody body) throws IOException {
        byte[] bytes = body == null ? new byte[0] : body.byteStream().readNBytes(MAX_ERROR_BODY);
        Map<String, List<String>> headers = response.headers().toMultimap();
        if (bytes.length > MAGIC.length && Arrays.equals(Arrays.copyOf(bytes, MAGIC.length), MAGIC)) {
            try {
                Runtime.Unknown unknown = Runtime.Unknown.parseFrom(Arrays.copyOfRange(bytes, MAGIC.length, bytes.length));
                Meta.Status s = Meta.Status.parseFrom(unknown.getRaw());
                return new ApiException(s.getReason() + ": " + s.getMessage(), response.code(), headers, s.getMessage());
            } catch (IOException unreadable) {
                // fall through: the code and the bytes as text say what there is
            }
        }
        String text = new String(bytes, StandardCharsets.UTF_8);
        return new ApiException("listing pods: HTTP " + response.code() + " " + text, response.code(), headers, text);
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
