package io.npmagent.harness.controlplane;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.ApiextensionsV1Api;
import io.kubernetes.client.openapi.models.V1CustomResourceDefinition;
import io.kubernetes.client.util.Yaml;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;

/**
 * network-policy-api as its pinned module ({@code pipelines/upstream/network-policy-api}) publishes it: the
 * ClusterNetworkPolicy CRD of either channel, applied as published.
 */
public final class NetworkPolicyApi {
    public static final String MODULE = "sigs.k8s.io/network-policy-api";

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
        V1CustomResourceDefinition crd = Yaml.loadAs(crd(channel).toFile(), V1CustomResourceDefinition.class);
        ApiextensionsV1Api api = new ApiextensionsV1Api(admin);
        String name = crd.getMetadata().getName();
        try {
            try {
                api.createCustomResourceDefinition(crd).execute();
            } catch (ApiException e) {
                if (e.getCode() != 409) {
                    throw e;
                }
                crd.getMetadata().setResourceVersion(api.readCustomResourceDefinition(name).execute().getMetadata().getResourceVersion());
                api.replaceCustomResourceDefinition(name, crd).execute();
            }
            Instant deadline = Instant.now().plusSeconds(60);
            while (!established(api.readCustomResourceDefinition(name).execute())) {
                if (Instant.now().isAfter(deadline)) {
                    throw new IOException(name + " not Established after 60 s");
                }
                Thread.sleep(100);
            }
        } catch (ApiException e) {
            throw new IOException("installing " + name + ": HTTP " + e.getCode() + " " + e.getResponseBody(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while installing " + name, e);
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
