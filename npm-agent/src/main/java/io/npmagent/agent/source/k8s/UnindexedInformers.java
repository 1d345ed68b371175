package io.npmagent.agent.source.k8s;

import com.google.gson.reflect.TypeToken;
import io.kubernetes.client.common.KubernetesListObject;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.ListerWatcher;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.informer.cache.Caches;
import io.kubernetes.client.informer.impl.DefaultSharedIndexInformer;
import io.kubernetes.client.openapi.ApiClient;
import java.util.List;

/**
 * A {@link SharedInformerFactory} whose informers keep no index beside their cache. The factory's own
 * informers index every object by namespace, which nothing here reads: at 150,000 pods that index held a
 * set entry and a key string per pod, 16 MB of a 300 MiB heap.
 */
final class UnindexedInformers extends SharedInformerFactory {
    UnindexedInformers(ApiClient client) {
        super(client);
    }

    /** An informer of {@code type} from {@code listerWatcher}, registered to start and stop with the others. */
    synchronized <T extends KubernetesObject, L extends KubernetesListObject> SharedIndexInformer<T> informerFor(
            ListerWatcher<T, L> listerWatcher, Class<T> type, long resyncMs) {
        // The cache needs one index function; one that names no index value makes it store none.
        Cache<T> cache = new Cache<>("none", o -> List.of(), Caches::deletionHandlingMetaNamespaceKeyFunc);
        SharedIndexInformer<T> informer = new DefaultSharedIndexInformer<>(type, listerWatcher, resyncMs, cache);
        informers.put(TypeToken.get(type).getType(), informer);
        return informer;
    }
}
