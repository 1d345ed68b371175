package io.npmagent.agent.source.k8s;

import io.kubernetes.client.common.KubernetesListObject;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NamespaceList;
import io.kubernetes.client.openapi.models.V1NetworkPolicy;
import io.kubernetes.client.openapi.models.V1NetworkPolicyList;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.options.ListOptions;
import java.io.IOException;

/**
 * The {@link StateDigest} of what the API server holds now, of the kinds the agent watches: a consistent
 * list (from etcd, not a cache) of every Namespace, Pod, NetworkPolicy, Node and (where served)
 * ClusterNetworkPolicy. When the agent's applied
 * digest equals it, the agent enforces exactly the server's objects.
 */
public final class ServerDigest {
    private ServerDigest() {}

    public static String of(ApiClient client) throws IOException {
        StateDigest digest = new StateDigest();
        take(digest, "Namespace", new GenericKubernetesApi<>(V1Namespace.class, V1NamespaceList.class, "", "v1", "namespaces", client));
        take(digest, "Pod", new GenericKubernetesApi<>(V1Pod.class, V1PodList.class, "", "v1", "pods", client));
        take(digest, "NetworkPolicy", new GenericKubernetesApi<>(V1NetworkPolicy.class, V1NetworkPolicyList.class, "networking.k8s.io", "v1",
                "networkpolicies", client));
        take(digest, "Node", new GenericKubernetesApi<>(V1Node.class, V1NodeList.class, "", "v1", "nodes", client));
        if (new ServedResource(client, ClusterPolicyJson.GROUP, ClusterPolicyJson.VERSION, ClusterPolicyJson.RESOURCE).ask()
                == ServedResource.Answer.SERVED) {
            take(digest, ClusterPolicyJson.KIND, new DynamicKubernetesApi(ClusterPolicyJson.GROUP, ClusterPolicyJson.VERSION,
                    ClusterPolicyJson.RESOURCE, client));
        }
        return digest.value();
    }

    /**
     * The server's digest for a loop that asks often (the sandbox's node daemon, ten times a second): the
     * objects are listed again only when the server's revision (the resourceVersion of a one-item
     * consistent list, which every write anywhere moves) is not the one of the last listing. Listing
     * 1,000 policies ten times a second took a core's third and the API server's sixth, taken from
     * whatever the node was there to measure.
     */
    public static final class Cached {
        private final ApiClient client;
        private String revision = "";
        private String digest;

        public Cached(ApiClient client) {
            this.client = client;
        }

        public String get() throws IOException {
            String now = revision(client);
            if (digest == null || now.isEmpty() || !now.equals(revision)) {
                digest = of(client); // read after the revision: a write in between moves the revision, and the next call lists again
                revision = now;
            }
            return digest;
        }
    }

    /** The server's current revision, or empty when it gives none. */
    static String revision(ApiClient client) throws IOException {
        try {
            V1NamespaceList one = new CoreV1Api(client).listNamespace().limit(1).execute();
            String rv = one.getMetadata() == null ? null : one.getMetadata().getResourceVersion();
            return rv == null ? "" : rv;
        } catch (ApiException e) {
            throw new IOException("cannot read the server's revision: HTTP " + e.getCode() + " " + e.getResponseBody(), e);
        }
    }

    private static <T extends KubernetesObject, L extends KubernetesListObject> void take(StateDigest digest, String kind, GenericKubernetesApi<T, L> api)
            throws IOException {
        ListOptions options = new ListOptions().limit(500);
        while (true) {
            L page;
            try {
                page = api.list(options).throwsApiException().getObject();
            } catch (ApiException e) {
                throw new IOException("cannot list " + kind + ": HTTP " + e.getCode() + " " + e.getResponseBody(), e);
            }
            for (KubernetesObject o : page.getItems()) {
                if (o.getMetadata() != null && o.getMetadata().getName() != null) {
                    digest.take(new ObjectChange(null, KubeSource.ref(kind, o.getMetadata()), o.getMetadata().getResourceVersion() == null ? "" : o.getMetadata().getResourceVersion()));
                }
            }
            String next = page.getMetadata() == null ? null : page.getMetadata().getContinue();
            if (next == null || next.isEmpty()) {
                return;
            }
            options = new ListOptions().limit(500)._continue(next);
        }
    }
}
