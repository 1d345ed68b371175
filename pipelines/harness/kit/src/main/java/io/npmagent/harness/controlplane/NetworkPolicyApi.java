package io.npmagent.harness.controlplane;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.ApiextensionsV1Api;
import io.kubernetes.client.openapi.models.V1CustomResourceDefinition;
import java.io.IOException;
import okhttp3.MediaType;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;

/**
 * network-policy-api as its pinned module ({@code pipelines/upstream/network-policy-api}) publishes it: the
 * ClusterNetworkPolicy CRD of either channel, applied as published.
 */
public final class NetworkPolicyApi {
    public static final String MODULE = "sigs.k8s.io/network-policy-api";
    /** The CRD's name in both channels. */
    public static final String CRD = "clusternetworkpolicies.policy.networking.k8s.io";

    /** The CRD's channels: Standard (what a cluster installs by default), Experimental (nodes peers, named ports, domainNames). */
    public enum Channel {
        STANDARD("standard"), EXPERIMENTAL("experimental");

        private final String dir;

        Channel(String dir) {
            this.dir = dir;
        }
    }

    private NetworkPolicyApi() {}

    /**
     * Installs the CRD of {@code channel} as published (or replaces the other channel's) and waits until the API
     * server serves it.
     */
    public static void install(ApiClient admin, Channel channel) throws IOException {
        // Server-side apply of the file's YAML as it is: a round trip through client-java's typed CRD model would
        // add the empty fields its schema classes start with, which the API server refuses.
        Request request = new Request.Builder()
                .url(admin.getBasePath() + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + CRD
                        + "?fieldManager=npm-agent-harness&force=true")
                .patch(RequestBody.create(Files.readString(crd(channel)), MediaType.get("application/apply-patch+yaml")))
                .build();
        try (Response r = admin.getHttpClient().newCall(request).execute()) {
            if (!r.isSuccessful()) {
                throw new IOException("installing " + CRD + ": HTTP " + r.code() + " " + (r.body() == null ? "" : r.body().string()));
            }
        }
        ApiextensionsV1Api api = new ApiextensionsV1Api(admin);
        try {
            Instant deadline = Instant.now().plusSeconds(60);
            while (!established(api.readCustomResourceDefinition(CRD).execute())) {
                if (Instant.now().isAfter(deadline)) {
                    throw new IOException(CRD + " not Established after 60 s");
                }
                Thread.sleep(100);
            }
        } catch (ApiException e) {
            throw new IOException("reading " + CRD + ": HTTP " + e.getCode() + " " + e.getResponseBody(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while installing " + CRD, e);
        }
    }

    private static boolean established(V1CustomResourceDefinition crd) {
        return crd.getStatus() != null && crd.getStatus().getConditions() != null && crd.getStatus().getConditions().stream()
                .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    /** The CRD file of {@code channel}, from the pinned module. */
    public static Path crd(Channel channel) throws IOException {
        Path module = GoModules.dir(Checkout.root().resolve("pipelines/upstream/network-policy-api"), MODULE);
        Path crd = module.resolve("config/crd/" + channel.dir + "/policy.networking.k8s.io_clusternetworkpolicies.yaml");
        if (!Files.isRegularFile(crd)) {
            throw new IOException(crd + " is missing from " + MODULE + " as published");
        }
        return crd;
    }
}
