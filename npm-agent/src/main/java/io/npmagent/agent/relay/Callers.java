package io.npmagent.agent.relay;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AuthenticationV1Api;
import io.kubernetes.client.openapi.models.V1TokenReview;
import io.kubernetes.client.openapi.models.V1TokenReviewSpec;
import io.kubernetes.client.openapi.models.V1TokenReviewStatus;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Set;

/**
 * Who may read the relay: a caller's bearer token, checked by the API server (a TokenReview), must be one
 * of the named users (the agent's ServiceAccount, {@code system:serviceaccount:kube-system:npm-agent}). An
 * answer is kept a minute by the token's hash, so 5,000 agents reconnecting cost the API server one review
 * each, not one per request. A review that fails (the API server unreachable) refuses and is not kept.
 */
public final class Callers {
    private static final System.Logger LOG = System.getLogger(Callers.class.getName());

    private final AuthenticationV1Api api;
    private final Set<String> users;
    private final Cache<String, Boolean> answers = Caffeine.newBuilder().expireAfterWrite(Duration.ofMinutes(1)).maximumSize(20_000).build();

    public Callers(ApiClient client, Set<String> users) {
        this.api = new AuthenticationV1Api(client);
        this.users = Set.copyOf(users);
    }

    /** Whether {@code authorization} (the request's header) names a token of one of the users. */
    public boolean allowed(String authorization) {
        if (authorization == null || !authorization.startsWith("Bearer ")) {
            return false;
        }
        String token = authorization.substring("Bearer ".length()).trim();
        String key = sha256(token);
        Boolean known = answers.getIfPresent(key);
        if (known != null) {
            return known;
        }
        try {
            V1TokenReviewStatus status = api.createTokenReview(new V1TokenReview().spec(new V1TokenReviewSpec().token(token))).execute().getStatus();
            boolean ok = status != null && Boolean.TRUE.equals(status.getAuthenticated()) && status.getUser() != null
                    && users.contains(status.getUser().getUsername());
            answers.put(key, ok);
            return ok;
        } catch (ApiException e) {
            LOG.log(System.Logger.Level.WARNING, "relay: a TokenReview failed ({0}: {1}); the caller is refused", e.getCode(), e.getMessage());
            return false;
        }
    }

    private static String sha256(String token) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
