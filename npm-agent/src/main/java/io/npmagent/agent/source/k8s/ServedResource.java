package io.npmagent.agent.source.k8s;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import java.io.IOException;
import okhttp3.Response;

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

    private final ApiClient client;
    private final String group;
    private final String version;
    private final String resource;
    /** Why the last answer was UNKNOWN; null after a clear one. */
    private volatile String problem;

    ServedResource(ApiClient client, String group, String version, String resource) {
        this.client = client;
        this.group = group;
        this.version = version;
        this.resource = resource;
    }

    /**
     * Asks discovery now; UNKNOWN when the server could not say (it is down, refused, or answered what is no
     * resource list), never a guess. Read leniently (a list without {@code resources} has none), not through
     * client-java's typed model, which refuses such a list.
     */
    Answer ask() {
        // The call as client-java builds it (with the client's credentials, a bearer token included), read here.
        try (Response r = new CustomObjectsApi(client).getAPIResources(group, version).buildCall(null).execute()) {
            problem = null;
            if (r.code() == 404) {
                return Answer.NOT_SERVED;
            }
            if (!r.isSuccessful() || r.body() == null) {
                problem = "HTTP " + r.code();
                return Answer.UNKNOWN;
            }
            JsonElement resources = JsonParser.parseString(r.body().string()).getAsJsonObject().get("resources");
            if (resources == null || !resources.isJsonArray()) {
                return Answer.NOT_SERVED;
            }
            for (JsonElement e : resources.getAsJsonArray()) {
                JsonElement name = e.isJsonObject() ? e.getAsJsonObject().get("name") : null;
                if (name != null && name.isJsonPrimitive() && resource.equals(name.getAsString())) {
                    return Answer.SERVED;
                }
            }
            return Answer.NOT_SERVED;
        } catch (ApiException | IOException | RuntimeException e) {
            problem = e.toString();
            return Answer.UNKNOWN;
        }
    }

    /** Why discovery gave no answer the last time it was asked, or null. */
    String problem() {
        return problem;
    }

    @Override
    public String toString() {
        return resource + "." + group + "/" + version;
    }
}
