package io.npmagent.agent.source.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.V1;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.ObjectRef;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A pod slimmed in protobuf means to the model what the whole pod means, for every shape the model reads
 * (labels, bandwidth annotations, named and unnamed ports, a sidecar's, host network, dual-stack, no
 * address, a terminal phase), and keeps nothing else.
 */
class ProtoSlimTest {
    private static Meta.ObjectMeta.Builder meta(String name) {
        return Meta.ObjectMeta.newBuilder().setName(name).setNamespace("shop").setResourceVersion("41").setUid("u-" + name)
                .setGenerateName("web-").putAnnotations("kubectl.kubernetes.io/last-applied-configuration", "{\"big\":true}")
                .addManagedFields(Meta.ManagedFieldsEntry.newBuilder().setManager("kubectl").setOperation("Apply"));
    }

    private static V1.Container.Builder container(String name) {
        return V1.Container.newBuilder().setName(name).setImage("nginx").addEnv(V1.EnvVar.newBuilder().setName("A").setValue("b"))
                .addArgs("--serve");
    }

    private static final V1.Pod WEB = V1.Pod.newBuilder()
            .setMetadata(meta("web").putLabels("app", "web").putLabels("tier", "front")
                    .putAnnotations("kubernetes.io/egress-bandwidth", "10M").putAnnotations("kubernetes.io/ingress-bandwidth", "20M")
                    .putAnnotations("prometheus.io/scrape", "true"))
            .setSpec(V1.PodSpec.newBuilder().setNodeName("node-1").setHostNetwork(false).setServiceAccountName("default")
                    .addInitContainers(container("init"))
                    .addInitContainers(container("proxy").setRestartPolicy("Always")
                            .addPorts(V1.ContainerPort.newBuilder().setName("admin").setContainerPort(9901).setProtocol("TCP")))
                    .addContainers(container("web")
                            .addPorts(V1.ContainerPort.newBuilder().setName("http").setContainerPort(8080).setProtocol("TCP"))
                            .addPorts(V1.ContainerPort.newBuilder().setName("dns").setContainerPort(53).setProtocol("UDP"))
                            .addPorts(V1.ContainerPort.newBuilder().setContainerPort(9000).setProtocol("TCP"))))
            .setStatus(V1.PodStatus.newBuilder().setPhase("Running").setPodIP("10.1.2.3").setHostIP("192.168.0.1")
                    .addPodIPs(V1.PodIP.newBuilder().setIp("10.1.2.3")).addPodIPs(V1.PodIP.newBuilder().setIp("fd00::3"))
                    .addConditions(V1.PodCondition.newBuilder().setType("Ready").setStatus("True")))
            .build();
    private static final V1.Pod HOST = V1.Pod.newBuilder().setMetadata(meta("host"))
            .setSpec(V1.PodSpec.newBuilder().setNodeName("node-1").setHostNetwork(true)
                    .addContainers(container("agent").addPorts(V1.ContainerPort.newBuilder().setContainerPort(9100).setHostPort(9100).setProtocol("TCP"))))
            .setStatus(V1.PodStatus.newBuilder().setPhase("Running").setPodIP("192.168.0.1").addPodIPs(V1.PodIP.newBuilder().setIp("192.168.0.1")))
            .build();
    private static final V1.Pod PENDING = V1.Pod.newBuilder().setMetadata(meta("pending").putLabels("app", "web"))
            .setSpec(V1.PodSpec.newBuilder().addContainers(container("web"))).setStatus(V1.PodStatus.newBuilder().setPhase("Pending")).build();
    private static final V1.Pod DONE = V1.Pod.newBuilder().setMetadata(meta("done").putLabels("job", "x"))
            .setSpec(V1.PodSpec.newBuilder().setNodeName("node-2").setRestartPolicy("Never").addContainers(container("job")))
            .setStatus(V1.PodStatus.newBuilder().setPhase("Succeeded").setPodIP("10.1.2.9").addPodIPs(V1.PodIP.newBuilder().setIp("10.1.2.9")))
            .build();

    @Test
    void theModelsPodOfASlimPodIsTheModelsPodOfTheWholeOne() {
        for (V1.Pod whole : List.of(WEB, HOST, PENDING, DONE)) {
            V1.Pod slim = ProtoSlim.pod(whole);
            ObjectRef ref = new ObjectRef("Pod", "shop", whole.getMetadata().getName());
            FieldErrors slimErrors = new FieldErrors(ref);
            FieldErrors wholeErrors = new FieldErrors(ref);
            assertThat(KubeObjects.pod(SlimObjects.pod(PodWatchList.pod(slim)), slimErrors)).as(ref.toString())
                    .isEqualTo(KubeObjects.pod(SlimObjects.pod(PodWatchList.pod(whole)), wholeErrors));
            assertThat(slimErrors.list()).isEqualTo(wholeErrors.list());
            assertThat(SlimObjects.pod(PodWatchList.pod(slim))).as("name, version and model").isEqualTo(SlimObjects.pod(PodWatchList.pod(whole)));
            assertThat(slim.getSerializedSize()).as("smaller").isLessThan(whole.getSerializedSize());
        }
        V1.Pod web = ProtoSlim.pod(WEB);
        assertThat(web.getMetadata().getAnnotationsMap()).containsOnlyKeys("kubernetes.io/egress-bandwidth", "kubernetes.io/ingress-bandwidth");
        assertThat(web.getMetadata().getManagedFieldsCount()).isZero();
        assertThat(web.getMetadata().hasUid()).isFalse();
        assertThat(web.getSpec().getContainers(0).getEnvCount()).isZero();
        assertThat(web.getStatus().getConditionsCount()).isZero();
        assertThat(web.getStatus().hasHostIP()).isFalse();
        assertThat(web.getSpec().getInitContainers(1).getRestartPolicy()).isEqualTo("Always");
        assertThat(ProtoSlim.pod(web)).as("slimming a slim pod changes nothing").isEqualTo(web);
    }
}
