package io.npmagent.agent.source.k8s;

import io.kubernetes.client.ProtoClient;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
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
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * Pages of every pod in the cluster, asked for in protobuf: the list is the costliest thing an agent asks
 * of the API server (every pod, on every node's start), and the server encodes a pod in protobuf for a
 * fraction of what JSON costs it, and sends fewer bytes. Watches stay JSON (client-java's {@code ProtoClient}
 * has no watch); each watch event is encoded once for all watchers anyway.
 *
 * <p>Each pod is read into a {@code V1Pod} holding what {@link SlimObjects#fields} keeps, exactly as JSON
 * decoding would have given it: protobuf writes a field JSON leaves out ({@code omitempty}) as its zero
 * value, so an empty string or a false is read as absent. {@code ProtoPodPagesApiServerTest} holds that
 * the model's pods from both are the same.
 *
 * <p>A server that answers in another format (a proxy, an aggregated or mock API server that speaks only
 * JSON) makes the agent list pods in JSON from then on, once logged: every kube-apiserver speaks protobuf
 * for pods, and an agent that could not list would enforce nothing ({@code UnparsableObjectMockServerTest}'s mock server
 * speaks only JSON).
 */
final class ProtoPodPages implements PagedListerWatcher.PageLister<V1PodList> {
    /** What the agent's pod lists ask for; the swarm's watchers ask the same. */
    public static final String ACCEPT = "application/vnd.kubernetes.protobuf";

    private static final System.Logger LOG = System.getLogger(ProtoPodPages.class.getName());

    private final ProtoClient client;
    private final PagedListerWatcher.PageLister<V1PodList> json;
    private volatile boolean protobuf = true;

    /** @param json the same pages in JSON, for a server that does not answer in protobuf */
    ProtoPodPages(ApiClient client, PagedListerWatcher.PageLister<V1PodList> json) {
        this.client = new ProtoClient(client);
        this.json = json;
    }

    @Override
    public V1PodList page(String resourceVersion, String resourceVersionMatch, String continueToken, int limit, Integer timeoutSeconds)
            throws ApiException {
        if (protobuf) {
            try {
                return protobufPage(resourceVersion, resourceVersionMatch, continueToken, limit, timeoutSeconds);
            } catch (NotProtobuf e) {
                protobuf = false;
                LOG.log(System.Logger.Level.WARNING, "the API server answered a protobuf list of pods in another format ({0}): pods are listed in JSON from now on",
                        e.getMessage());
            }
        }
        return json.page(resourceVersion, resourceVersionMatch, continueToken, limit, timeoutSeconds);
    }

    /** An answer that is not protobuf at all (no Status in it either: {@code ProtoClient} reads none with no magic number). */
    private static final class NotProtobuf extends Exception {
        NotProtobuf(String message) {
            super(message);
        }
    }

    private V1PodList protobufPage(String resourceVersion, String resourceVersionMatch, String continueToken, int limit, Integer timeoutSeconds)
            throws ApiException, NotProtobuf {
        StringJoiner query = new StringJoiner("&", "/api/v1/pods?", "");
        add(query, "continue", continueToken);
        query.add("limit=" + limit);
        add(query, "resourceVersion", resourceVersion);
        add(query, "resourceVersionMatch", resourceVersionMatch);
        add(query, "timeoutSeconds", timeoutSeconds == null ? null : timeoutSeconds.toString());
        ProtoClient.ObjectOrStatus<V1.PodList> answer;
        try {
            answer = client.list(V1.PodList.newBuilder(), query.toString());
        } catch (IOException e) {
            throw new ApiException(e);
        } catch (ApiException e) {
            if (e.getCode() == 0 && e.getMessage() != null && e.getMessage().contains("magic number")) {
                throw new NotProtobuf(e.getMessage());
            }
            throw e;
        }
        if (answer.status != null) {
            Meta.Status s = answer.status;
            throw new ApiException(s.getCode(), s.getReason() + ": " + s.getMessage());
        }
        if (answer.object == null) {
            throw new ApiException("the API server answered a pod list with an empty body");
        }
        List<V1Pod> items = new ArrayList<>(answer.object.getItemsCount());
        for (V1.Pod p : answer.object.getItemsList()) {
            items.add(pod(p));
        }
        Meta.ListMeta m = answer.object.getMetadata();
        return new V1PodList().items(items).metadata(new V1ListMeta().resourceVersion(text(m.getResourceVersion()))._continue(text(m.getContinue())));
    }

    private static void add(StringJoiner query, String name, String value) {
        if (value != null && !value.isEmpty()) {
            query.add(name + "=" + URLEncoder.encode(value, StandardCharsets.UTF_8));
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
