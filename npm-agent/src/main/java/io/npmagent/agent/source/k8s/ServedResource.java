package io.npmagent.agent.source.k8s;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import io.kubernetes.client.openapi.models.V1APIResource;
import io.kubernetes.client.openapi.models.V1APIResourceList;

/**
 * Whether the API server serves one resource of an API group that a CRD may add or take away at any
 * time (ClusterNetworkPolicy is one): asked of discovery ({@code /apis/GROUP/VERSION}), which every
 * authenticated client may read, so the ClusterRole grows by nothing for it. An informer for a resource
 * that is not served would relist forever and never sync; the agent must start and enforce NetworkPolicy
 * without it, and take it up once it appears.
 */
final class ServedResource {
    /** What discovery said last: not asked yet or not answered, served, or not served (HTTP 404). */
    enum Answer { UNKNOWN, SERVED, NOT_SERVED }

    private final CustomObjectsApi api;
    private final String group;
    private final String version;
    private final String resource;

    ServedResource(ApiClient client, String group, String version, String resource) {
        this.api = new CustomObjectsApi(client);
        this.group = group;
        this.version = version;
        this.resource = resource;
    }

    /** Asks discovery now; UNKNOWN when the server could not say (it is down, or refused), never a guess. */
    Answer ask() {
        try {
            V1APIResourceList list = api.getAPIResources(group, version).execute();
            for (V1APIResource r : list.getResources()) {
                if (resource.equals(r.getName())) {
                    return Answer.SERVED;
                }
            }
            return Answer.NOT_SERVED;
        } catch (ApiException e) {
            return e.getCode() == 404 ? Answer.NOT_SERVED : Answer.UNKNOWN;
        } catch (RuntimeException e) {
            return Answer.UNKNOWN;
        }
    }

    @Override
    public String toString() {
        return resource + "." + group + "/" + version;
    }
}
