package io.npmagent.agent.cluster;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.kubernetes.client.openapi.ApiClient;
import io.npmagent.agent.source.k8s.KubeClients;
import io.npmagent.harness.controlplane.AgentIdentity;
import io.npmagent.harness.controlplane.ControlPlane;
import io.npmagent.harness.controlplane.NetworkPolicyApi;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A real control plane for a test ({@link ControlPlane}: upstream etcd, kube-apiserver with RBAC,
 * kube-controller-manager), the shipped RBAC applied, and the two identities a test uses: the admin
 * (a fabric8 client, for the test's own writes) and the agent's ServiceAccount (a client-java client
 * with a TokenRequest token, for the agent). Prints the server's version, so a test log shows what it
 * ran against.
 */
public final class TestCluster implements AutoCloseable {
    private final ControlPlane cp;
    private final KubernetesClient admin;
    private Path agentKubeconfig;

    private TestCluster(ControlPlane cp) throws IOException {
        this.cp = cp;
        this.admin = new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(Files.readString(cp.adminKubeconfig()))).build();
    }

    public static TestCluster start(Path dir) throws IOException {
        ControlPlane cp = ControlPlane.start(dir, "127.0.0.1");
        try {
            AgentIdentity.applyRbac(cp.admin());
            TestCluster c = new TestCluster(cp);
            c.agentKubeconfig = AgentIdentity.kubeconfig(cp);
            System.out.printf("real control plane: kube-apiserver %s at %s, up in %d ms; the agent runs as %s/%s%n", cp.version(), cp.server(),
                    cp.startup().toMillis(), AgentIdentity.NAMESPACE, AgentIdentity.ACCOUNT);
            return c;
        } catch (IOException | RuntimeException e) {
            cp.close();
            throw e;
        }
    }

    public ControlPlane controlPlane() {
        return cp;
    }

    /** The admin's client, for the test's writes and reads of the truth. */
    public KubernetesClient admin() {
        return admin;
    }

    /** The agent's client: its ServiceAccount's token, no read timeout (as {@link KubeClients} makes one). */
    public ApiClient agentClient() throws IOException {
        return KubeClients.forWatches(ControlPlane.client(agentKubeconfig));
    }

    /** A kubeconfig with the agent's ServiceAccount token, for an agent process. */
    public Path agentKubeconfig() {
        return agentKubeconfig;
    }

    /** Creates the objects; a pod's status (which a create ignores) is then written as kubelet writes it. */
    public void create(HasMetadata... objects) {
        for (HasMetadata o : objects) {
            if (o instanceof Pod pod) {
                PodStatus status = pod.getStatus();
                Pod created = admin.resource(pod).create();
                if (status != null) {
                    created.setStatus(status);
                    admin.resource(created).updateStatus();
                }
            } else {
                admin.resource(o).create();
                if (o instanceof io.fabric8.kubernetes.api.model.Namespace ns) {
                    try {
                        cp.awaitDefaultServiceAccount(ns.getMetadata().getName());
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }
            }
        }
    }

    /** Installs network-policy-api's ClusterNetworkPolicy CRD, as the pinned module publishes it, and waits until it is served. */
    public void installClusterNetworkPolicies(NetworkPolicyApi.Channel channel) throws IOException {
        NetworkPolicyApi.install(cp.admin(), channel);
    }

    /** Removes the CRD, and with it every ClusterNetworkPolicy. */
    public void removeClusterNetworkPolicies() {
        admin.apiextensions().v1().customResourceDefinitions().withName(CNP_CRD).delete();
    }

    /** Creates (or replaces) a ClusterNetworkPolicy written as YAML. */
    public void applyClusterNetworkPolicy(String yaml) {
        admin.resource(Serialization.unmarshal(yaml, GenericKubernetesResource.class)).createOr(NonDeletingOperation::update);
    }

    /** Every ClusterNetworkPolicy the server holds, as JSON (none when the CRD is not installed). */
    public List<String> clusterNetworkPolicies() {
        if (admin.apiextensions().v1().customResourceDefinitions().withName(CNP_CRD).get() == null) {
            return List.of();
        }
        return admin.genericKubernetesResources("policy.networking.k8s.io/v1beta1", "ClusterNetworkPolicy").list().getItems().stream()
                .map(Serialization::asJson).toList();
    }

    private static final String CNP_CRD = "clusternetworkpolicies.policy.networking.k8s.io";

    @Override
    public void close() {
        admin.close();
        cp.close();
    }
}
