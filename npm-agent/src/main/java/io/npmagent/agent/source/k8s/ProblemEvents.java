package io.npmagent.agent.source.k8s;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1EventSource;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.ValidationError;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Tells the object's owner, as a Kubernetes Warning Event on the object, what part of it this node's
 * agent cannot enforce (and so enforces closed): a NetworkPolicy or ClusterNetworkPolicy with an invalid
 * field (a ClusterNetworkPolicy's {@code domainNames} peer, which this agent does not support, is one), a pod with an
 * invalid bandwidth annotation ({@code Invalid<Kind>}), or an object whose rules the kernel refused
 * ({@code ApplyFailed}, with the kernel's words; retried with backoff meanwhile). One event per object,
 * reason and distinct message, posted when the problem first appears or changes; posting happens on a
 * thread of its own, so a slow API server never holds up the model thread, and a failed post is logged,
 * not retried (the status and /debug/state still list it).
 */
public final class ProblemEvents implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ProblemEvents.class.getName());
    static final String COMPONENT = "npm-agent";
    /** The API server caps an event's message; the whole list is in the agent's status. */
    static final int MAX_MESSAGE = 1024;

    private final CoreV1Api api;
    private final String node;
    private final Map<ObjectRef, String> posted = new HashMap<>();
    private final Map<ObjectRef, String> postedRefusals = new HashMap<>();
    private final ExecutorService poster = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "npm-agent-events");
        t.setDaemon(true);
        return t;
    });

    public ProblemEvents(ApiClient client, String node) {
        this.api = new CoreV1Api(client);
        this.node = node;
    }

    /** Posts an event for every object whose problems are new or changed since the last call; model thread only. */
    public void report(Map<ObjectRef, List<ValidationError>> errors) {
        posted.keySet().removeIf(ref -> !errors.containsKey(ref) || errors.get(ref).isEmpty());
        errors.forEach((ref, list) -> {
            if (list.isEmpty()) {
                return;
            }
            String message = list.stream().map(e -> e.field() + ": " + e.reason()).collect(Collectors.joining("; "));
            postOnce(posted, ref, message, "Invalid" + ref.kind(), "not enforced as written on node " + node + " (fails closed): " + message);
        });
    }

    /** Posts an ApplyFailed event for every object the kernel newly refuses, or refuses in other words; model thread only. */
    public void reportRefusals(Map<ObjectRef, String> refused) {
        postedRefusals.keySet().removeIf(ref -> !refused.containsKey(ref));
        refused.forEach((ref, message) -> postOnce(postedRefusals, ref, message, "ApplyFailed", "the kernel on node " + node
                + " refused this object's rules (the rest stays enforced; it is retried with backoff, and until it lands"
                + " the pods it selects stay isolated without its allows): " + message));
    }

    /**
     * Posts a Warning Event on a pod now, on the poster thread (any thread may call): what a caller that
     * deduplicates and caps on its own posts ({@code NetworkPolicyDenied}).
     */
    public void postOnPod(PodKey pod, String reason, String text) {
        CoreV1Event event = event(ObjectRef.of(pod), reason, text);
        try {
            poster.execute(() -> post(event));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            LOG.log(System.Logger.Level.DEBUG, "not posting {0} on {1}: the agent is stopping", reason, pod);
        }
    }

    /** Posts the event unless {@code posted} says this object's last one had the same message. */
    private void postOnce(Map<ObjectRef, String> posted, ObjectRef ref, String message, String reason, String text) {
        if (!message.equals(posted.get(ref))) {
            posted.put(ref, message);
            CoreV1Event event = event(ref, reason, text);
            poster.execute(() -> post(event));
        }
    }

    CoreV1Event event(ObjectRef ref, String reason, String text) {
        if (text.length() > MAX_MESSAGE) {
            text = text.substring(0, MAX_MESSAGE - 3) + "...";
        }
        OffsetDateTime now = OffsetDateTime.now();
        // Events of cluster-scoped objects (namespaces, ClusterNetworkPolicies) live in "default", as kubectl looks for them.
        String namespace = ref.namespace() == null ? "default" : ref.namespace();
        return new CoreV1Event()
                .apiVersion("v1")
                .kind("Event")
                .metadata(new V1ObjectMeta().generateName(ref.name() + ".").namespace(namespace))
                .involvedObject(new V1ObjectReference().kind(ref.kind()).namespace(ref.namespace()).name(ref.name())
                        .apiVersion(apiVersion(ref.kind())))
                .type("Warning")
                .reason(reason)
                .message(text)
                .source(new V1EventSource().component(COMPONENT).host(node))
                .reportingComponent(COMPONENT)
                .reportingInstance(node)
                .firstTimestamp(now)
                .lastTimestamp(now)
                .count(1);
    }

    private static String apiVersion(String kind) {
        return switch (kind) {
            case "NetworkPolicy" -> "networking.k8s.io/v1";
            case ClusterPolicyJson.KIND -> ClusterPolicyJson.API_VERSION;
            default -> "v1";
        };
    }

    private void post(CoreV1Event event) {
        try {
            api.createNamespacedEvent(event.getMetadata().getNamespace(), event).execute();
        } catch (ApiException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot post an event about {0}: {1}", event.getInvolvedObject().getName(),
                    e instanceof ApiException a ? a.getCode() + " " + a.getResponseBody() : e.toString());
        }
    }

    @Override
    public void close() {
        poster.shutdown();
        try {
            poster.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
