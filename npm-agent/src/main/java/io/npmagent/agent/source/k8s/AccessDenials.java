package io.npmagent.agent.source.k8s;

import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.ApiException;
import io.npmagent.dataplane.model.ApiSyntax;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the API server's authorizer refuses the informers, per resource and verb: a 403 on a list or a
 * watch is recorded with the server's own message (which names the user, verb, resource and scope),
 * and cleared when the same call next succeeds. A missing grant then shows in {@code /readyz} and the
 * status instead of only as a reflector's retry in the log.
 */
final class AccessDenials {
    private static final System.Logger LOG = System.getLogger(AccessDenials.class.getName());
    private final Map<String, String> denied = new ConcurrentHashMap<>();

    /** The recorder for one resource's informer. */
    For of(String resource) {
        return new For(resource);
    }

    List<String> current() {
        List<String> out = new ArrayList<>(denied.values());
        out.sort(null);
        return out;
    }

    final class For {
        private final String resource;

        private For(String resource) {
            this.resource = resource;
        }

        void succeeded(String verb) {
            if (denied.remove(resource + " " + verb) != null) {
                LOG.log(System.Logger.Level.INFO, "the API server allows {0} {1} again", verb, resource);
            }
        }

        /** Notes a refusal (403) and returns the exception for the caller to throw on. */
        ApiException failed(String verb, ApiException e) {
            if (e.getCode() == 403) {
                String text = "the API server forbids " + verb + " " + resource + ": " + ApiSyntax.escapeControls(message(e));
                if (!text.equals(denied.put(resource + " " + verb, text))) {
                    LOG.log(System.Logger.Level.ERROR, "{0} (the ClusterRole in deploy/rbac.yaml grants it; is it applied?)", text);
                }
            }
            return e;
        }
    }

    private static String message(ApiException e) {
        try {
            return JsonParser.parseString(e.getResponseBody()).getAsJsonObject().get("message").getAsString();
        } catch (RuntimeException notStatus) {
            // GenericKubernetesApi puts the Status's message in the exception's own message.
            return e.getMessage() != null && !e.getMessage().isBlank() ? e.getMessage() : "HTTP " + e.getCode();
        }
    }
}
