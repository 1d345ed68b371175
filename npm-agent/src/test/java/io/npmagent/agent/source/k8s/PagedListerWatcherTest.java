package io.npmagent.agent.source.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ListMeta;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NamespaceList;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.util.CallGeneratorParams;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A list read page by page: a page the API server refuses for load is asked again, not the whole list. A
 * whole list in one request is asked the same way, and pages follow once it cannot be had.
 */
class PagedListerWatcherTest {
    private final List<String> asked = new ArrayList<>();

    @Test
    void aRefusedPageIsAskedAgainAndThePagesBeforeItAreKept() throws ApiException {
        int[] refusals = {2};
        PagedListerWatcher<V1Namespace, V1NamespaceList> lister = lister((rv, match, next, limit, timeout) -> {
            asked.add(next == null ? "first" : next);
            if ("p2".equals(next) && refusals[0]-- > 0) {
                throw new ApiException(429, Map.of("Retry-After", List.of("0")), "{\"kind\":\"Status\",\"code\":429}");
            }
            return next == null ? page("p2", "a", "b") : page("", "c");
        });

        V1NamespaceList list = lister.list(new CallGeneratorParams(false, "0", null));

        assertThat(list.getItems()).extracting(n -> n.getMetadata().getName()).containsExactly("a", "b", "c");
        assertThat(asked).containsExactly("first", "p2", "p2", "p2");
    }

    @Test
    void anyOtherFailureFailsTheListForTheReflectorToRelist() {
        PagedListerWatcher<V1Namespace, V1NamespaceList> lister = lister((rv, match, next, limit, timeout) -> {
            asked.add(next == null ? "first" : next);
            if (next != null) {
                throw new ApiException(410, Map.of(), "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}");
            }
            return page("p2", "a");
        });

        assertThatThrownBy(() -> lister.list(new CallGeneratorParams(false, "0", null)))
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.getCode()).isEqualTo(410));
        assertThat(asked).containsExactly("first", "p2");
    }

    @Test
    void aPageRefusedTooOftenFailsTheList() {
        PagedListerWatcher<V1Namespace, V1NamespaceList> lister = lister((rv, match, next, limit, timeout) -> {
            asked.add("first");
            throw new ApiException(429, Map.of("retry-after", List.of("0")), "");
        });

        assertThatThrownBy(() -> lister.list(new CallGeneratorParams(false, "0", null))).isInstanceOf(ApiException.class);
        assertThat(asked).hasSize(PagedListerWatcher.MAX_REFUSALS + 1);
    }

    @Test
    void aWholeListIsAskedAsTheReflectorAsksAndAgainWhileRefused() throws ApiException {
        int[] refusals = {2};
        PagedListerWatcher<V1Namespace, V1NamespaceList> lister = new PagedListerWatcher<>(null, rv -> {
            asked.add("whole at " + rv);
            if (refusals[0]-- > 0) {
                throw new ApiException(429, Map.of("Retry-After", List.of("0")), "");
            }
            return page(null, "a", "b");
        }, null, (rv, match, next, limit, timeout) -> {
            throw new AssertionError("no page while the whole list can be had");
        }, new AccessDenials().of("namespaces"), n -> n, (items, meta) -> new V1NamespaceList().items(items).metadata(meta));

        assertThat(lister.list(new CallGeneratorParams(false, "0", null)).getItems()).extracting(n -> n.getMetadata().getName()).containsExactly("a", "b");
        assertThat(asked).containsExactly("whole at 0", "whole at 0", "whole at 0");
    }

    @Test
    void pagesFollowWhenTheWholeListCannotBeHad() throws ApiException {
        PagedListerWatcher<V1Namespace, V1NamespaceList> lister = new PagedListerWatcher<>(null, rv -> {
            asked.add("whole");
            return null;
        }, null, (rv, match, next, limit, timeout) -> {
            asked.add(next == null ? "first at " + rv + " " + match + " of " + limit : next);
            return next == null ? page("p2", "a") : page("", "b");
        }, new AccessDenials().of("namespaces"), n -> n, (items, meta) -> new V1NamespaceList().items(items).metadata(meta));

        assertThat(lister.list(new CallGeneratorParams(false, "0", null)).getItems()).hasSize(2);
        assertThat(asked).containsExactly("whole", "first at 1 NotOlderThan of " + PagedListerWatcher.PAGE, "p2");
    }

    @Test
    void retryAfterIsTheServersSecondsCappedAndOneWithout() {
        assertThat(PagedListerWatcher.retryAfterMillis(new ApiException(429, Map.of("Retry-After", List.of("1")), ""))).isEqualTo(1000);
        assertThat(PagedListerWatcher.retryAfterMillis(new ApiException(429, Map.of("Retry-After", List.of("3600")), "")))
                .isEqualTo(PagedListerWatcher.MAX_RETRY_AFTER_S * 1000);
        assertThat(PagedListerWatcher.retryAfterMillis(new ApiException(429, Map.of(), ""))).isEqualTo(1000);
        assertThat(PagedListerWatcher.retryAfterMillis(new ApiException(429, Map.of("Retry-After", List.of("Wed, 21 Oct 2026 07:28:00 GMT")), "")))
                .isEqualTo(1000);
    }

    private static PagedListerWatcher<V1Namespace, V1NamespaceList> lister(PagedListerWatcher.PageLister<V1NamespaceList> pages) {
        return new PagedListerWatcher<>(null, pages, new AccessDenials().of("namespaces"), n -> n,
                (items, meta) -> new V1NamespaceList().items(items).metadata(meta));
    }

    private static V1NamespaceList page(String next, String... names) {
        List<V1Namespace> items = new ArrayList<>();
        for (String n : names) {
            items.add(new V1Namespace().metadata(new V1ObjectMeta().name(n)));
        }
        return new V1NamespaceList().items(items).metadata(new V1ListMeta()._continue(next).resourceVersion("7"));
    }
}
