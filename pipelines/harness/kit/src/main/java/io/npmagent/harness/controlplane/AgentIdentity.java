package io.npmagent.harness.controlplane;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1ClusterRoleBinding;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.openapi.models.V1TokenRequestSpec;
import io.kubernetes.client.util.Yaml;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The agent's identity in a cluster, exactly as the DaemonSet has it: {@code deploy/rbac.yaml} as shipped
 * (read from the checkout: the ServiceAccount, the ClusterRole and its binding), and a token
 * for that ServiceAccount from the TokenRequest API, in a kubeconfig. The agent never runs as admin.
 */
public final class AgentIdentity {
    public static final String NAMESPACE = "kube-system";
    public static final String ACCOUNT = "npm-agent";
    /** Long enough for a sandbox that is left running for weeks; the API server signs it as asked. */
    private static final long TOKEN_SECONDS = 60L * 24 * 3600;
    private static final String RBAC = "npm-agent/deploy/rbac.yaml";

    private AgentIdentity() {}

    /** The shipped rbac.yaml, parsed. */
    public static List<Object> rbacObjects() throws IOException {
        return Yaml.loadAll(Files.readString(Checkout.file(RBAC), StandardCharsets.UTF_8));
    }

    /** Creates (or replaces) the shipped ServiceAccount, ClusterRole and ClusterRoleBinding. */
    public static void applyRbac(ApiClient admin) throws IOException {
        CoreV1Api core = new CoreV1Api(admin);
        RbacAuthorizationV1Api rbac = new RbacAuthorizationV1Api(admin);
        for (Object o : rbacObjects()) {
            try {
                if (o instanceof V1ServiceAccount sa) {
                    createOrKeep(() -> core.createNamespacedServiceAccount(sa.getMetadata().getNamespace(), sa).execute());
                } else if (o instanceof V1ClusterRole role) {
                    replaceClusterRole(admin, role);
                } else if (o instanceof V1ClusterRoleBinding binding) {
                    createOrKeep(() -> rbac.createClusterRoleBinding(binding).execute());
                } else {
                    throw new IOException("rbac.yaml holds a " + o.getClass().getSimpleName() + ", which the harness does not apply");
                }
            } catch (ApiException e) {
                throw new IOException("cannot apply rbac.yaml: HTTP " + e.getCode() + " " + e.getResponseBody(), e);
            }
        }
    }

    /** Writes {@code role} over the ClusterRole of its name (a test narrows and restores the grant with it). */
    public static void replaceClusterRole(ApiClient admin, V1ClusterRole role) throws ApiException {
        RbacAuthorizationV1Api rbac = new RbacAuthorizationV1Api(admin);
        try {
            rbac.createClusterRole(role).execute();
        } catch (ApiException e) {
            if (e.getCode() != 409) {
                throw e;
            }
            V1ClusterRole current = rbac.readClusterRole(role.getMetadata().getName()).execute();
            role.getMetadata().setResourceVersion(current.getMetadata().getResourceVersion());
            rbac.replaceClusterRole(role.getMetadata().getName(), role).execute();
        }
    }

    /** The shipped ClusterRole, as a fresh object each call. */
    public static V1ClusterRole shippedClusterRole() throws IOException {
        return rbacObjects().stream().filter(V1ClusterRole.class::isInstance).map(V1ClusterRole.class::cast).findFirst()
                .orElseThrow(() -> new IOException("rbac.yaml has no ClusterRole"));
    }

    /** A kubeconfig for the agent's ServiceAccount with a token the API server issued (TokenRequest). */
    public static Path kubeconfig(ControlPlane cp) throws IOException {
        try {
            AuthenticationV1TokenRequest request = new AuthenticationV1TokenRequest()
                    .spec(new V1TokenRequestSpec().expirationSeconds(TOKEN_SECONDS));
            AuthenticationV1TokenRequest granted = new CoreV1Api(cp.admin()).createNamespacedServiceAccountToken(ACCOUNT, NAMESPACE, request).execute();
            return cp.tokenKubeconfig("agent", granted.getStatus().getToken());
        } catch (ApiException e) {
            throw new IOException("TokenRequest for " + NAMESPACE + "/" + ACCOUNT + ": HTTP " + e.getCode() + " " + e.getResponseBody(), e);
        }
    }

    private interface Call {
        void run() throws ApiException;
    }

    private static void createOrKeep(Call create) throws ApiException {
        try {
            create.run();
        } catch (ApiException e) {
            if (e.getCode() != 409) {
                throw e;
            }
        }
    }
}
