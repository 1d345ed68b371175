package io.npmagent.agent.source.k8s;

import io.kubernetes.client.common.KubernetesListObject;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.ListerWatcher;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ListMeta;
import io.kubernetes.client.util.CallGeneratorParams;
import io.kubernetes.client.util.Watchable;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import io.kubernetes.client.util.generic.options.ListOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Lists a kind cluster-wide in pages and slims each page as it arrives, so that listing 100,000 pods
 * never holds 100,000 full pods at once; watches from where the list ended. The reflector above it
 * relists whenever a watch ends in error or its resource version has expired (410 Gone).
 */
final class PagedListerWatcher<T extends KubernetesObject, L extends KubernetesListObject> implements ListerWatcher<T, L> {
    static final int PAGE = 500;

    private final GenericKubernetesApi<T, L> api;
    private final AccessDenials.For access;
    private final UnaryOperator<T> slim;
    private final ListAssembler<T, L> assemble;

    /** Builds a list object of the kind from the slimmed items and the last page's metadata. */
    interface ListAssembler<T, L> {
        L list(List<T> items, V1ListMeta meta);
    }

    PagedListerWatcher(GenericKubernetesApi<T, L> api, AccessDenials.For access, UnaryOperator<T> slim, ListAssembler<T, L> assemble) {
        this.api = api;
        this.access = access;
        this.slim = slim;
        this.assemble = assemble;
    }

    @Override
    public L list(CallGeneratorParams params) throws ApiException {
        try {
            L list = listPages(params);
            access.succeeded("list");
            return list;
        } catch (ApiException e) {
            throw access.failed("list", e);
        }
    }

    private L listPages(CallGeneratorParams params) throws ApiException {
        List<T> items = new ArrayList<>();
        // No resourceVersion, ever: a real kube-apiserver serves a list "at any version" (the reflector's
        // first list asks for "0") or "not older than" one from its watch cache, which ignores limit; 100,000
        // pods then arrive as one response, which client-java decodes as a whole tree first (5,000 pods filled
        // a 256 MiB heap). A list at the latest version is paged, and is what a relist after 410 Gone asks for;
        // it is never older than what the reflector asked, so its semantics are the stronger ones.
        ListOptions options = new ListOptions().limit(PAGE).timeoutSeconds(params.timeoutSeconds);
        while (true) {
            KubernetesApiResponse<L> page = api.list(options).throwsApiException();
            L list = page.getObject();
            for (Object item : list.getItems()) {
                @SuppressWarnings("unchecked")
                T typed = (T) item;
                items.add(slim.apply(typed));
            }
            V1ListMeta meta = list.getMetadata();
            String next = meta == null ? null : meta.getContinue();
            if (next == null || next.isEmpty()) {
                return assemble.list(items, meta);
            }
            // A continue token carries the list's resource version; the two may not be sent together.
            options = new ListOptions().limit(PAGE)._continue(next).timeoutSeconds(params.timeoutSeconds);
        }
    }

    @Override
    public Watchable<T> watch(CallGeneratorParams params) throws ApiException {
        ListOptions options = new ListOptions().resourceVersion(params.resourceVersion).timeoutSeconds(params.timeoutSeconds);
        try {
            Watchable<T> w = api.watch(options);
            access.succeeded("watch");
            return w;
        } catch (ApiException e) {
            throw access.failed("watch", e);
        }
    }
}
