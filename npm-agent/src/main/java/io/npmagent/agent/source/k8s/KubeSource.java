package io.npmagent.agent.source.k8s;

import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.NetworkingV1Api;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NamespaceList;
import io.kubernetes.client.openapi.models.V1NetworkPolicy;
import io.kubernetes.client.openapi.models.V1NetworkPolicyList;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Function;

/**
 * The agent's view of the API server: shared informers for every Namespace, Pod (all of them: every pod
 * is a peer) and NetworkPolicy, with resync. Objects are slimmed ({@link SlimObjects}) before they enter
 * the caches. Once the caches have synced, {@link #wholeStateThenEvents()} gives their content, and
 * from then on every add, update and delete becomes a {@link ClusterEvent} in {@link #events()}, in the
 * order the informers saw them; the model thread takes them from there. The informers survive dropped
 * watches, expired resource versions and API server restarts by relisting (the reflector does this),
 * and a relist turns into the upserts and deletes that bring the caches to the server's state.
 *
 * <p>Objects the model cannot hold (no name, an unparsable address) are reported by {@link #problems()}
 * under their kind, namespace and name; a pod with a bad port keeps its other ports.
 */
public final class KubeSource implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(KubeSource.class.getName());

    private final SharedInformerFactory factory;
    private final SharedIndexInformer<V1Namespace> namespaces;
    private final SharedIndexInformer<V1Pod> pods;
    private final SharedIndexInformer<V1NetworkPolicy> policies;
    private final BlockingQueue<ObjectChange> events = new LinkedBlockingQueue<>();
    private final Map<ObjectRef, String> problems = new ConcurrentHashMap<>();
    private final AccessDenials denials = new AccessDenials();
    /** Off until the caches have synced: the initial list is taken whole from the caches, not as 100,000 events. */
    private volatile boolean forwarding;

    /**
     * @param client an API client whose read timeout is off (watches are long requests); see {@link KubeClients}
     * @param resync how often the informers redeliver every cached object (NPM's ResyncPeriodInMinutes)
     */
    public KubeSource(ApiClient client, Duration resync) {
        this.factory = new SharedInformerFactory(client);
        CoreV1Api core = new CoreV1Api(client);
        NetworkingV1Api networking = new NetworkingV1Api(client);
        long resyncMs = resync.toMillis();
        this.namespaces = factory.sharedIndexInformerFor(new PagedListerWatcher<>(
                new GenericKubernetesApi<>(V1Namespace.class, V1NamespaceList.class, "", "v1", "namespaces", client),
                (rv, match, next, limit, timeout) -> core.listNamespace().resourceVersion(rv).resourceVersionMatch(match)._continue(next)
                        .limit(limit).timeoutSeconds(timeout).execute(), denials.of("namespaces"),
                SlimObjects::namespace, (items, meta) -> new V1NamespaceList().items(items).metadata(meta)), V1Namespace.class, resyncMs);
        this.pods = factory.sharedIndexInformerFor(new PagedListerWatcher<>(
                new GenericKubernetesApi<>(V1Pod.class, V1PodList.class, "", "v1", "pods", client),
                (rv, match, next, limit, timeout) -> core.listPodForAllNamespaces().resourceVersion(rv).resourceVersionMatch(match)._continue(next)
                        .limit(limit).timeoutSeconds(timeout).execute(), denials.of("pods"),
                SlimObjects::pod, (items, meta) -> new V1PodList().items(items).metadata(meta)), V1Pod.class, resyncMs);
        this.policies = factory.sharedIndexInformerFor(new PagedListerWatcher<>(
                new GenericKubernetesApi<>(V1NetworkPolicy.class, V1NetworkPolicyList.class, "networking.k8s.io", "v1", "networkpolicies", client),
                (rv, match, next, limit, timeout) -> networking.listNetworkPolicyForAllNamespaces().resourceVersion(rv).resourceVersionMatch(match)
                        ._continue(next).limit(limit).timeoutSeconds(timeout).execute(),
                denials.of("networkpolicies"), SlimObjects::policy, (items, meta) -> new V1NetworkPolicyList().items(items).metadata(meta)), V1NetworkPolicy.class, resyncMs);
        // Watch events arrive whole; slim them too before they are cached.
        namespaces.setTransform(SlimObjects::slim);
        pods.setTransform(SlimObjects::slim);
        policies.setTransform(SlimObjects::slim);
        namespaces.addEventHandler(handler("Namespace", this::namespaceUpserted, m -> new ClusterEvent.NamespaceDeleted(m.getName())));
        pods.addEventHandler(handler("Pod", this::podUpserted, m -> new ClusterEvent.PodDeleted(new PodKey(m.getNamespace(), m.getName()))));
        policies.addEventHandler(handler("NetworkPolicy", this::policyUpserted,
                m -> new ClusterEvent.PolicyDeleted(new PolicyKey(m.getNamespace(), m.getName()))));
    }

    public void start() {
        factory.startAllRegisteredInformers();
    }

    /** Whether all three caches hold a whole list: before that, nothing may reach the kernel. */
    public boolean synced() {
        return namespaces.hasSynced() && pods.hasSynced() && policies.hasSynced();
    }

    /** Changes as the informers saw them; for the model thread alone to take. */
    public BlockingQueue<ObjectChange> events() {
        return events;
    }

    /**
     * Everything in the caches as upserts (namespaces, then pods, then policies), once they have synced,
     * and from then on every change in {@link #events()}. An informer updates its cache before it calls
     * the handlers, so a change whose handler ran before this call is in what it returns, and one whose
     * handler runs after is queued; a change can be both, and an upsert or delete applied twice changes
     * nothing.
     */
    public List<ObjectChange> wholeStateThenEvents() {
        if (!synced()) {
            throw new IllegalStateException("the informer caches have not synced yet");
        }
        forwarding = true;
        List<ObjectChange> out = new ArrayList<>();
        namespaces.getIndexer().list().forEach(n -> add(out, "Namespace", n, this::namespaceUpserted));
        pods.getIndexer().list().forEach(p -> add(out, "Pod", p, this::podUpserted));
        policies.getIndexer().list().forEach(p -> add(out, "NetworkPolicy", p, this::policyUpserted));
        return out;
    }

    /** Objects the model cannot hold as they are, sorted, each naming the object and the field. */
    public List<String> problems() {
        List<String> out = new ArrayList<>(problems.values());
        out.sort(null);
        return out;
    }

    /**
     * What the API server refuses the agent now (a list or watch answered 403), each naming the verb and
     * resource and quoting the server; empty once every informer lists and watches again. The agent is
     * not ready while any remain: its view of the cluster may be stale or missing.
     */
    public List<String> denied() {
        return denials.current();
    }

    /** The reference an object's changes are counted under (cluster-scoped objects have namespace ""). */
    public static ObjectRef ref(String kind, V1ObjectMeta meta) {
        return new ObjectRef(kind, meta.getNamespace() == null ? "" : meta.getNamespace(), meta.getName());
    }

    /** Objects in the caches, per kind: what /debug/state shows. */
    public Map<String, Integer> counts() {
        return Map.of("namespaces", namespaces.getIndexer().list().size(), "pods", pods.getIndexer().list().size(),
                "networkpolicies", policies.getIndexer().list().size());
    }

    private ClusterEvent namespaceUpserted(V1Namespace n) {
        return new ClusterEvent.NamespaceUpserted(KubeObjects.namespace(n));
    }

    private ClusterEvent podUpserted(V1Pod p) {
        ObjectRef ref = new ObjectRef("Pod", p.getMetadata().getNamespace(), p.getMetadata().getName());
        FieldErrors errors = new FieldErrors(ref);
        ClusterEvent event = new ClusterEvent.PodUpserted(KubeObjects.pod(p, errors));
        if (errors.count() > 0) {
            problems.put(ref, ApiSyntax.escapeControls(errors.list().toString()));
        } else {
            problems.remove(ref);
        }
        return event;
    }

    private ClusterEvent policyUpserted(V1NetworkPolicy p) {
        return new ClusterEvent.PolicyUpserted(KubeObjects.policy(p));
    }

    private <T extends KubernetesObject> void add(List<ObjectChange> out, String kind, T object, Function<T, ClusterEvent> convert) {
        ObjectChange c = convertOrReport(kind, object, convert);
        if (c != null) {
            out.add(c);
        }
    }

    private <T extends KubernetesObject> ObjectChange convertOrReport(String kind, T object, Function<T, ClusterEvent> convert) {
        V1ObjectMeta meta = object.getMetadata();
        if (meta == null || meta.getName() == null) {
            LOG.log(System.Logger.Level.WARNING, "a {0} without metadata.name from the API server, ignored", kind);
            return null;
        }
        ObjectRef ref = new ObjectRef(kind, meta.getNamespace(), meta.getName());
        String version = meta.getResourceVersion() == null ? "" : meta.getResourceVersion();
        try {
            ClusterEvent e = convert.apply(object);
            if (!kind.equals("Pod")) {
                problems.remove(ref);
            }
            return new ObjectChange(e, ref(kind, meta), version);
        } catch (IllegalArgumentException e) {
            // The object stays out of the model; the rest of the cluster keeps working.
            problems.put(ref, ApiSyntax.escapeControls(ref + ": " + e.getMessage()));
            return new ObjectChange(null, ref(kind, meta), version);
        }
    }

    private <T extends KubernetesObject> ResourceEventHandler<T> handler(String kind, Function<T, ClusterEvent> upsert,
            Function<V1ObjectMeta, ClusterEvent> delete) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T object) {
                if (forwarding) {
                    offer(convertOrReport(kind, object, upsert));
                }
            }

            @Override
            public void onUpdate(T before, T after) {
                if (forwarding) {
                    offer(convertOrReport(kind, after, upsert));
                }
            }

            @Override
            public void onDelete(T object, boolean finalStateUnknown) {
                V1ObjectMeta meta = object.getMetadata();
                if (meta != null && meta.getName() != null) {
                    problems.remove(new ObjectRef(kind, meta.getNamespace(), meta.getName()));
                    offer(new ObjectChange(delete.apply(meta), ref(kind, meta), null));
                }
            }
        };
    }

    private void offer(ObjectChange e) {
        if (e != null && forwarding) {
            events.add(e);
        }
    }

    @Override
    public void close() {
        factory.stopAllRegisteredInformers(true);
    }
}
