package io.npmagent.agent.source.k8s;

import io.kubernetes.client.common.KubernetesListObject;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.ListerWatcher;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ListMeta;
import io.kubernetes.client.util.CallGeneratorParams;
import io.kubernetes.client.util.Watchable;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.options.ListOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Lists a kind cluster-wide and watches from where the list ended. The list is in pages, each slimmed as
 * it arrives, so that listing 100,000 objects never holds 100,000 full ones at once; or, for a kind whose
 * whole list can be read as one stream ({@link WholeLister}: pods, as a WatchList, {@link PodWatchList}), in one request,
 * and watched in protobuf ({@link ProtoWatcher}).
 * The reflector above it relists whenever a watch ends in error or its resource version has expired (410 Gone).
 */
final class PagedListerWatcher<T extends KubernetesObject, L extends KubernetesListObject> implements ListerWatcher<T, L> {
    /** A page of a kind whose pages come as JSON: a JSON page is held whole, as text and as a tree, while it is decoded. */
    static final int PAGE = 500;
    /** Refusals of one request (429) waited out before the list fails and the reflector relists. */
    static final int MAX_REFUSALS = 30;
    static final long MAX_RETRY_AFTER_S = 10;

    private final GenericKubernetesApi<T, L> api;
    private final AccessDenials.For access;
    private final WholeLister<L> whole;
    private final ProtoWatcher<T> protoWatcher;
    private final PageLister<L> pages;
    private final UnaryOperator<T> slim;
    private final ListAssembler<T, L> assemble;
    /** Only the objects it selects, or null for all; a page lister applies it itself. */
    private final String fieldSelector;

    /** Builds a list object of the kind from the slimmed items and the last page's metadata. */
    interface ListAssembler<T, L> {
        L list(List<T> items, V1ListMeta meta);
    }

    /** One page of the kind's list, cluster-wide (the typed API: GenericKubernetesApi cannot send resourceVersionMatch). */
    interface PageLister<L> {
        L page(String resourceVersion, String resourceVersionMatch, String continueToken, int limit, Integer timeoutSeconds) throws ApiException;
    }

    /** The kind's whole list in one request, its items slimmed as they are read; null when this server cannot give it so (then pages). */
    interface WholeLister<L> {
        L list(String resourceVersion) throws ApiException;
    }

    /** The kind's watch in protobuf; null when this server cannot give it so (then JSON). */
    interface ProtoWatcher<T> {
        Watchable<T> watch(String resourceVersion, Integer timeoutSeconds) throws ApiException;
    }

    PagedListerWatcher(GenericKubernetesApi<T, L> api, PageLister<L> pages, AccessDenials.For access, UnaryOperator<T> slim,
            ListAssembler<T, L> assemble) {
        this(api, null, null, pages, access, slim, assemble);
    }

    /**
     * @param whole        asked first for every list; {@code pages} only once it has answered null
     * @param protoWatcher asked first for every watch; {@code api}'s JSON watch only once it has answered null
     */
    PagedListerWatcher(GenericKubernetesApi<T, L> api, WholeLister<L> whole, ProtoWatcher<T> protoWatcher, PageLister<L> pages,
            AccessDenials.For access, UnaryOperator<T> slim, ListAssembler<T, L> assemble) {
        this(api, whole, protoWatcher, pages, access, slim, assemble, null);
    }

    /** @param fieldSelector what the JSON watch selects (the other three select it themselves), or null for all */
    PagedListerWatcher(GenericKubernetesApi<T, L> api, WholeLister<L> whole, ProtoWatcher<T> protoWatcher, PageLister<L> pages,
            AccessDenials.For access, UnaryOperator<T> slim, ListAssembler<T, L> assemble, String fieldSelector) {
        this.fieldSelector = fieldSelector;
        this.api = api;
        this.whole = whole;
        this.protoWatcher = protoWatcher;
        this.pages = pages;
        this.access = access;
        this.slim = slim;
        this.assemble = assemble;
    }

    @Override
    public L list(CallGeneratorParams params) throws ApiException {
        try {
            L list = whole == null ? null : askedAgainWhileRefused(() -> whole.list(params.resourceVersion));
            if (list == null) {
                list = listPages(params);
            }
            access.succeeded("list");
            return list;
        } catch (ApiException e) {
            throw access.failed("list", e);
        }
    }

    private L listPages(CallGeneratorParams params) throws ApiException {
        List<T> items = new ArrayList<>();
        // A real kube-apiserver answers a list "at any version" (resourceVersion=0, the reflector's first
        // list) from its watch cache whole, ignoring limit: 100,000 pods as one response, which client-java
        // decodes as a whole tree first (5,000 pods overfilled a 256 MiB heap). "Not older than 1" means the
        // same (any state there is) and is served from the cache in pages. A relist from a version X (with a
        // limit: exactly X, from etcd, in pages) is sent as it is: etcd answers 410 Gone once X is compacted,
        // and the reflector then asks for "" (the latest), which is sent as no version at all.
        String asked = params.resourceVersion;
        boolean any = "0".equals(asked);
        String version = any ? "1" : asked == null || asked.isEmpty() ? null : asked;
        String match = any ? "NotOlderThan" : null;
        String next = null;
        while (true) {
            String from = next;
            // A continue token carries the list's resource version; the two may not be sent together.
            L list = askedAgainWhileRefused(() -> from == null ? pages.page(version, match, null, PAGE, params.timeoutSeconds)
                    : pages.page(null, null, from, PAGE, params.timeoutSeconds));
            for (Object item : list.getItems()) {
                @SuppressWarnings("unchecked")
                T typed = (T) item;
                items.add(slim.apply(typed));
            }
            V1ListMeta meta = list.getMetadata();
            next = meta == null ? null : meta.getContinue();
            if (next == null || next.isEmpty()) {
                return assemble.list(items, meta);
            }
        }
    }

    /** One request to the server. */
    private interface Ask<R> {
        R ask() throws ApiException;
    }

    /**
     * One request (a page, or a whole list), asked again while the API server refuses it for load (429: its
     * priority and fairness queue was full, or the request waited too long in it), after the Retry-After it
     * names. Failing the list instead would throw away the pages read so far and make the reflector ask for
     * them all again: in a restart of many agents, more of the load that was refused. Any other failure fails
     * the list.
     */
    private static <R> R askedAgainWhileRefused(Ask<R> request) throws ApiException {
        for (int refused = 0; ; refused++) {
            try {
                return request.ask();
            } catch (ApiException e) {
                if (e.getCode() != 429 || refused >= MAX_REFUSALS) {
                    throw e;
                }
                try {
                    Thread.sleep(retryAfterMillis(e));
                } catch (InterruptedException stop) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** The Retry-After a refusal names, in seconds (kube-apiserver's is 1), at most {@link #MAX_RETRY_AFTER_S}; 1 s if none. */
    static long retryAfterMillis(ApiException e) {
        Map<String, List<String>> headers = e.getResponseHeaders();
        List<String> values = headers == null ? null : headers.entrySet().stream().filter(h -> "retry-after".equalsIgnoreCase(h.getKey()))
                .map(Map.Entry::getValue).findFirst().orElse(null);
        try {
            long seconds = values == null || values.isEmpty() ? 1 : Long.parseLong(values.get(0).trim());
            return Math.max(0, Math.min(seconds, MAX_RETRY_AFTER_S)) * 1000;
        } catch (NumberFormatException dateOrJunk) {
            return 1000;
        }
    }

    @Override
    public Watchable<T> watch(CallGeneratorParams params) throws ApiException {
        ListOptions options = new ListOptions().resourceVersion(params.resourceVersion).timeoutSeconds(params.timeoutSeconds).fieldSelector(fieldSelector);
        try {
            Watchable<T> w = protoWatcher == null ? null : protoWatcher.watch(params.resourceVersion, params.timeoutSeconds);
            if (w == null) {
                w = api.watch(options);
            }
            access.succeeded("watch");
            return w;
        } catch (ApiException e) {
            throw access.failed("watch", e);
        }
    }
}
