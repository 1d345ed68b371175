package io.npmagent.agent.source.k8s;

import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.NetworkingV1Api;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NamespaceList;
import io.kubernetes.client.openapi.models.V1NetworkPolicy;
import io.kubernetes.client.openapi.models.V1NetworkPolicyList;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import io.kubernetes.client.util.generic.options.ListOptions;
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
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Function;

/**
 * The agent's view of the API server: shared informers for every Namespace, Pod (all of them: every pod
 * is a peer), NetworkPolicy and Node (for ClusterNetworkPolicy's {@code nodes} peers), with resync, and
 * for ClusterNetworkPolicies while the API server serves them ({@link ServedResource}). Pods are listed as a WatchList and watched,
 * both in protobuf ({@link PodWatchList}); everything else is listed in pages and watched in JSON. Objects are slimmed ({@link SlimObjects}) before they enter
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

    private final UnindexedInformers factory;
    private final SharedIndexInformer<V1Namespace> namespaces;
    /** Every pod: from the API server, or from the pod relay when there is one ({@link PodRelay}). */
    private final SharedIndexInformer<V1Pod> pods;
    /** With a pod relay, this node's own pods from the API server, which win over the relay's; else null. */
    private final SharedIndexInformer<V1Pod> ownPods;
    private final UnindexedInformers ownFactory;
    private final PodRelay relay;
    private final SharedIndexInformer<V1NetworkPolicy> policies;
    private final SharedIndexInformer<V1Node> nodes;
    private final ApiClient client;
    private final Duration discoveryPeriod;
    private final long resyncMs;
    private final ServedResource clusterPolicyApi;
    /** Asks discovery whether ClusterNetworkPolicies are served, and starts or stops their informer to match. */
    private final ScheduledExecutorService discovery = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "npm-discovery");
        t.setDaemon(true);
        return t;
    });
    private volatile ServedResource.Answer clusterPoliciesServed = ServedResource.Answer.UNKNOWN;
    /** Runs exactly while the resource is served; its own factory, so it can stop and start again alone. */
    private UnindexedInformers clusterPolicyFactory;
    private volatile SharedIndexInformer<DynamicKubernetesObject> clusterPolicies;
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
        this(client, resync, DISCOVERY_PERIOD);
    }

    /** @param discoveryPeriod how often discovery is asked whether ClusterNetworkPolicies are served */
    public KubeSource(ApiClient client, Duration resync, Duration discoveryPeriod) {
        this(client, resync, discoveryPeriod, null);
    }

    /**
     * Pods from a relay, not the API server (npm-agent/README.md, "Design, being built"): every pod from
     * {@code client}, the relay's, except this node's own, which come from the API server, selected by
     * node, so that they never wait on the relay. A pod the node's own watch holds is its, whatever the
     * relay says of it (a relay that lags may still say the pod is pending).
     */
    public record PodRelay(ApiClient client, String node) {}

    /** @param relay where pods come from, or null: from the API server */
    public KubeSource(ApiClient client, Duration resync, Duration discoveryPeriod, PodRelay relay) {
        this.relay = relay;
        this.discoveryPeriod = discoveryPeriod;
        this.client = client;
        this.factory = new UnindexedInformers(client);
        CoreV1Api core = new CoreV1Api(client);
        NetworkingV1Api networking = new NetworkingV1Api(client);
        this.resyncMs = resync.toMillis();
        this.clusterPolicyApi = new ServedResource(client, ClusterPolicyJson.GROUP, ClusterPolicyJson.VERSION, ClusterPolicyJson.RESOURCE);
        this.namespaces = factory.informerFor(new PagedListerWatcher<>(
                new GenericKubernetesApi<>(V1Namespace.class, V1NamespaceList.class, "", "v1", "namespaces", client),
                (rv, match, next, limit, timeout) -> core.listNamespace().resourceVersion(rv).resourceVersionMatch(match)._continue(next)
                        .limit(limit).timeoutSeconds(timeout).execute(), denials.of("namespaces"),
                SlimObjects::namespace, (items, meta) -> new V1NamespaceList().items(items).metadata(meta)), V1Namespace.class, resyncMs);
        if (relay == null) {
            PodWatchList podStreams = new PodWatchList(client, SlimObjects::pod);
            this.pods = factory.informerFor(new PagedListerWatcher<>(
                    new GenericKubernetesApi<>(V1Pod.class, V1PodList.class, "", "v1", "pods", client), podStreams, podStreams,
                    (rv, match, next, limit, timeout) -> core.listPodForAllNamespaces().resourceVersion(rv).resourceVersionMatch(match)._continue(next)
                            .limit(limit).timeoutSeconds(timeout).execute(), denials.of("pods"),
                    SlimObjects::pod, (items, meta) -> new V1PodList().items(items).metadata(meta)), V1Pod.class, resyncMs);
            this.ownFactory = null;
            this.ownPods = null;
        } else {
            PodWatchList relayed = new PodWatchList(relay.client(), SlimObjects::pod);
            this.pods = factory.informerFor(new PagedListerWatcher<>(
                    new GenericKubernetesApi<>(V1Pod.class, V1PodList.class, "", "v1", "pods", relay.client()), relayed, relayed,
                    (rv, match, next, limit, timeout) -> {
                        throw new ApiException("the pod relay at " + relay.client().getBasePath() + " gives no WatchList in protobuf", 406, null, null);
                    }, denials.of("pods (relay)"), SlimObjects::pod, (items, meta) -> new V1PodList().items(items).metadata(meta)), V1Pod.class, resyncMs);
            String own = "spec.nodeName=" + relay.node();
            PodWatchList ownStreams = new PodWatchList(client, SlimObjects::pod, own);
            // Its own factory: a factory keeps one informer a type.
            this.ownFactory = new UnindexedInformers(client);
            this.ownPods = ownFactory.informerFor(new PagedListerWatcher<>(
                    new GenericKubernetesApi<>(V1Pod.class, V1PodList.class, "", "v1", "pods", client), ownStreams, ownStreams,
                    (rv, match, next, limit, timeout) -> core.listPodForAllNamespaces().fieldSelector(own).resourceVersion(rv).resourceVersionMatch(match)
                            ._continue(next).limit(limit).timeoutSeconds(timeout).execute(), denials.of("pods"),
                    SlimObjects::pod, (items, meta) -> new V1PodList().items(items).metadata(meta), own), V1Pod.class, resyncMs);
            ownPods.setTransform(SlimObjects::slim);
        }
        this.policies = factory.informerFor(new PagedListerWatcher<>(
                new GenericKubernetesApi<>(V1NetworkPolicy.class, V1NetworkPolicyList.class, "networking.k8s.io", "v1", "networkpolicies", client),
                (rv, match, next, limit, timeout) -> networking.listNetworkPolicyForAllNamespaces().resourceVersion(rv).resourceVersionMatch(match)
                        ._continue(next).limit(limit).timeoutSeconds(timeout).execute(),
                denials.of("networkpolicies"), SlimObjects::policy, (items, meta) -> new V1NetworkPolicyList().items(items).metadata(meta)), V1NetworkPolicy.class, resyncMs);
        this.nodes = factory.informerFor(new PagedListerWatcher<>(
                new GenericKubernetesApi<>(V1Node.class, V1NodeList.class, "", "v1", "nodes", client),
                (rv, match, next, limit, timeout) -> core.listNode().resourceVersion(rv).resourceVersionMatch(match)._continue(next)
                        .limit(limit).timeoutSeconds(timeout).execute(), denials.of("nodes"),
                SlimObjects::node, (items, meta) -> new V1NodeList().items(items).metadata(meta)), V1Node.class, resyncMs);
        // Watch events arrive whole; slim them too before they are cached.
        nodes.setTransform(SlimObjects::slim);
        namespaces.setTransform(SlimObjects::slim);
        pods.setTransform(SlimObjects::slim);
        policies.setTransform(SlimObjects::slim);
        namespaces.addEventHandler(handler("Namespace", this::namespaceUpserted, m -> new ClusterEvent.NamespaceDeleted(m.getName())));
        ResourceEventHandler<V1Pod> podHandler = handler("Pod", this::podUpserted, m -> new ClusterEvent.PodDeleted(new PodKey(m.getNamespace(), m.getName())));
        if (relay == null) {
            pods.addEventHandler(podHandler);
        } else {
            ownPods.addEventHandler(podHandler);
            pods.addEventHandler(new ResourceEventHandler<>() {
                @Override
                public void onAdd(V1Pod p) {
                    if (relayed(p)) {
                        podHandler.onAdd(p);
                    }
                }

                @Override
                public void onUpdate(V1Pod before, V1Pod after) {
                    if (relayed(after)) {
                        podHandler.onUpdate(before, after);
                    }
                }

                @Override
                public void onDelete(V1Pod p, boolean finalStateUnknown) {
                    // Whatever its node: a relay that lags may have said the pod was pending after the node's own
                    // watch had it come and go, and this is what takes that back.
                    if (!ownHolds(p)) {
                        podHandler.onDelete(p, finalStateUnknown);
                    }
                }
            });
        }
        policies.addEventHandler(handler("NetworkPolicy", this::policyUpserted,
                m -> new ClusterEvent.PolicyDeleted(new PolicyKey(m.getNamespace(), m.getName()))));
        nodes.addEventHandler(handler("Node", this::nodeUpserted, m -> new ClusterEvent.NodeDeleted(m.getName())));
    }

    /**
     * The media type the agent's lists and watches of {@code resource} ask for: pods' WatchList and watch
     * protobuf streams ({@link PodWatchList}), the rest JSON.
     */
    public static String mediaType(String resource) {
        return "pods".equals(resource) ? PodWatchList.ACCEPT : "application/json";
    }

    public void start() {
        factory.startAllRegisteredInformers();
        if (ownFactory != null) {
            ownFactory.startAllRegisteredInformers();
        }
        discovery.execute(this::discoveryTick);
    }

    /**
     * How often discovery is asked whether ClusterNetworkPolicies are served while they are not (their CRD
     * installed): one small GET per node, answered from the API server's memory; while they are, ten times
     * less often (their CRD removed, which also ends the informer's watch). At 5,000 nodes: 170 and 17 a second.
     */
    public static final Duration DISCOVERY_PERIOD = Duration.ofSeconds(30);

    private void discoveryTick() {
        try {
            followClusterPolicies();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "following " + clusterPolicyApi + " failed; asking again later", e);
        }
        long next = clusterPoliciesServed == ServedResource.Answer.SERVED ? discoveryPeriod.toMillis() * 10 : discoveryPeriod.toMillis();
        try {
            discovery.schedule(this::discoveryTick, next, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            // closed meanwhile: nothing more to follow
        }
    }

    /**
     * Whether every cache holds a whole list: before that, nothing may reach the kernel. ClusterNetworkPolicies
     * count once discovery has answered: not served, or served and listed.
     */
    public boolean synced() {
        SharedIndexInformer<DynamicKubernetesObject> cnp = clusterPolicies;
        return namespaces.hasSynced() && pods.hasSynced() && (ownPods == null || ownPods.hasSynced()) && policies.hasSynced() && nodes.hasSynced()
                && clusterPoliciesServed != ServedResource.Answer.UNKNOWN && (cnp == null || cnp.hasSynced());
    }

    /**
     * Starts the ClusterNetworkPolicy informer when discovery says the resource is served, and stops it when
     * it is no longer (its CRD deleted: the API server deleted every object of it, so each cached one goes as
     * a delete). An unanswered question changes nothing.
     */
    private synchronized void followClusterPolicies() {
        ServedResource.Answer answer = clusterPolicyApi.ask();
        if (answer == ServedResource.Answer.UNKNOWN) {
            return;
        }
        if (answer == ServedResource.Answer.SERVED && clusterPolicyFactory == null) {
            LOG.log(System.Logger.Level.INFO, "the API server serves {0}: watching it", clusterPolicyApi);
            clusterPolicyFactory = new UnindexedInformers(client);
            // Dynamic: it registers the JSON adapters that keep each object's JSON (client-java has no type for this kind).
            DynamicKubernetesApi api = new DynamicKubernetesApi(ClusterPolicyJson.GROUP, ClusterPolicyJson.VERSION, ClusterPolicyJson.RESOURCE, client);
            SharedIndexInformer<DynamicKubernetesObject> informer = clusterPolicyFactory.informerFor(new PagedListerWatcher<>(api,
                    // Few objects: a list "at any version" (the reflector's first) is sent as resourceVersion 0, whole.
                    (rv, match, next, limit, timeout) -> api.list(new ListOptions().resourceVersion(match != null ? "0" : rv)._continue(next)
                            .limit(limit).timeoutSeconds(timeout)).throwsApiException().getObject(),
                    denials.of(ClusterPolicyJson.RESOURCE), SlimObjects::clusterPolicy,
                    SlimObjects::clusterPolicyList), DynamicKubernetesObject.class, resyncMs);
            informer.setTransform(SlimObjects::slim);
            informer.addEventHandler(handler(ClusterPolicyJson.KIND, this::clusterPolicyUpserted,
                    m -> new ClusterEvent.ClusterPolicyDeleted(m.getName())));
            clusterPolicies = informer;
            clusterPolicyFactory.startAllRegisteredInformers();
        } else if (answer == ServedResource.Answer.NOT_SERVED && clusterPolicyFactory != null) {
            LOG.log(System.Logger.Level.INFO, "the API server no longer serves {0}: its policies are gone", clusterPolicyApi);
            SharedIndexInformer<DynamicKubernetesObject> informer = clusterPolicies;
            clusterPolicies = null;
            clusterPolicyFactory.stopAllRegisteredInformers(true);
            clusterPolicyFactory = null;
            for (DynamicKubernetesObject o : informer.getIndexer().list()) {
                problems.remove(ref(ClusterPolicyJson.KIND, o.getMetadata()));
                offer(new ObjectChange(new ClusterEvent.ClusterPolicyDeleted(o.getMetadata().getName()),
                        ref(ClusterPolicyJson.KIND, o.getMetadata()), null));
            }
        }
        clusterPoliciesServed = answer;
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
        nodes.getIndexer().list().forEach(n -> add(out, "Node", n, this::nodeUpserted));
        allPods().forEach(p -> add(out, "Pod", p, this::podUpserted));
        policies.getIndexer().list().forEach(p -> add(out, "NetworkPolicy", p, this::policyUpserted));
        SharedIndexInformer<DynamicKubernetesObject> cnp = clusterPolicies;
        if (cnp != null) {
            cnp.getIndexer().list().forEach(p -> add(out, ClusterPolicyJson.KIND, p, this::clusterPolicyUpserted));
        }
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
     * resource and quoting the server; empty once every informer lists and watches again. Also a discovery
     * that will not say whether ClusterNetworkPolicies are served. The agent is not ready while any remain:
     * its view of the cluster may be stale or missing.
     */
    public List<String> denied() {
        List<String> out = new ArrayList<>(denials.current());
        String problem = clusterPolicyApi.problem();
        if (clusterPoliciesServed == ServedResource.Answer.UNKNOWN && problem != null) {
            // Until it is known whether ClusterNetworkPolicies exist, nothing is applied: their Admin Denies may be among them.
            out.add("the API server does not say whether it serves " + clusterPolicyApi + " (discovery: "
                    + ApiSyntax.escapeControls(problem) + ")");
        }
        return out;
    }

    /** The reference an object's changes are counted under (cluster-scoped objects have namespace ""). */
    public static ObjectRef ref(String kind, V1ObjectMeta meta) {
        return new ObjectRef(kind, meta.getNamespace() == null ? "" : meta.getNamespace(), meta.getName());
    }

    /** Objects in the caches, per kind: what /debug/state shows. */
    public Map<String, Integer> counts() {
        SharedIndexInformer<DynamicKubernetesObject> cnp = clusterPolicies;
        return Map.of("namespaces", namespaces.getIndexer().list().size(), "pods", allPods().size(),
                "networkpolicies", policies.getIndexer().list().size(), "nodes", nodes.getIndexer().list().size(),
                ClusterPolicyJson.RESOURCE, cnp == null ? 0 : cnp.getIndexer().list().size());
    }

    /** Whether the relay's word on {@code p} counts: not this node's pod, which the node's own watch holds. */
    private boolean relayed(V1Pod p) {
        return !relay.node().equals(CachedPod.nodeName(p)) && !ownHolds(p);
    }

    private boolean ownHolds(V1Pod p) {
        V1ObjectMeta m = p.getMetadata();
        return m != null && ownPods.getIndexer().getByKey(m.getNamespace() + "/" + m.getName()) != null;
    }

    /** Every pod in the caches: with a relay, the node's own and the relay's others. */
    private List<V1Pod> allPods() {
        if (relay == null) {
            return pods.getIndexer().list();
        }
        List<V1Pod> out = new ArrayList<>(ownPods.getIndexer().list());
        pods.getIndexer().list().stream().filter(this::relayed).forEach(out::add);
        return out;
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

    private ClusterEvent nodeUpserted(V1Node n) {
        return new ClusterEvent.NodeUpserted(KubeObjects.node(n));
    }

    /** Read as written; what is wrong with its shape is reported like a pod's bad field, and read so that it fails closed. */
    private ClusterEvent clusterPolicyUpserted(DynamicKubernetesObject p) {
        ObjectRef ref = ref(ClusterPolicyJson.KIND, p.getMetadata());
        FieldErrors errors = new FieldErrors(ref);
        ClusterEvent event = new ClusterEvent.ClusterPolicyUpserted(ClusterPolicyJson.read(p.getMetadata().getName(), p.getRaw(), errors));
        if (errors.count() > 0) {
            problems.put(ref, ApiSyntax.escapeControls(errors.list().toString()));
        } else {
            problems.remove(ref);
        }
        return event;
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
            if (!kind.equals("Pod") && !kind.equals(ClusterPolicyJson.KIND)) {
                problems.remove(ref); // those two report their own fields' problems as they convert
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
        discovery.shutdownNow();
        synchronized (this) {
            if (clusterPolicyFactory != null) {
                clusterPolicyFactory.stopAllRegisteredInformers(true);
            }
        }
        factory.stopAllRegisteredInformers(true);
        if (ownFactory != null) {
            ownFactory.stopAllRegisteredInformers(true);
        }
    }
}
