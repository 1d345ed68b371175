package io.npmagent.agent.source.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NetworkPolicy;
import io.kubernetes.client.openapi.models.V1Pod;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.ObjectRef;
import org.junit.jupiter.api.Test;

/** A slimmed object means to the model exactly what the original means, and is much smaller. */
class SlimObjectsTest {
    private static final JSON JSON = new JSON();

    /** A pod as an API server sends it, with everything a real one carries that the agent does not read. */
    static final String FAT_POD = """
            {"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-7d9c","namespace":"shop","uid":"1b2c","resourceVersion":"4711",
             "generateName":"web-","creationTimestamp":"2026-11-01T00:00:00Z",
             "labels":{"app":"web","pod-template-hash":"7d9c"},
             "annotations":{"kubernetes.io/egress-bandwidth":"10M","kubernetes.io/ingress-bandwidth":"20M",
               "kubectl.kubernetes.io/last-applied-configuration":"{\\"spec\\":{\\"containers\\":[]}}","prometheus.io/scrape":"true"},
             "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7d9c","uid":"9a","controller":true}],
             "finalizers":["example.com/keep"],
             "managedFields":[{"manager":"kubelet","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1",
               "fieldsV1":{"f:status":{"f:conditions":{},"f:podIP":{}}}}]},
             "spec":{"nodeName":"node-1","hostNetwork":false,"serviceAccountName":"web","restartPolicy":"Always",
              "initContainers":[{"name":"init","image":"busybox","command":["sh","-c","true"]},
                {"name":"proxy","image":"envoy","restartPolicy":"Always","ports":[{"name":"admin","containerPort":9901}]}],
              "containers":[{"name":"web","image":"nginx:1.27","args":["-g","daemon off;"],
                "env":[{"name":"A","value":"b"}],"ports":[{"name":"http","containerPort":8080,"protocol":"TCP"},
                {"name":"dns","containerPort":53,"protocol":"UDP"}],
                "resources":{"requests":{"cpu":"100m","memory":"64Mi"}},
                "readinessProbe":{"httpGet":{"path":"/","port":8080}},
                "volumeMounts":[{"name":"data","mountPath":"/data"}]}],
              "volumes":[{"name":"data","emptyDir":{}}],
              "tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]},
             "status":{"phase":"Running","podIP":"10.1.2.3","podIPs":[{"ip":"10.1.2.3"},{"ip":"fd00::3"}],"hostIP":"192.168.0.1",
              "hostIPs":[{"ip":"192.168.0.1"}],
              "conditions":[{"type":"Ready","status":"True"}],
              "containerStatuses":[{"name":"web","ready":true,"restartCount":0,"image":"nginx:1.27","imageID":"sha256:ab","started":true,
                "state":{"running":{"startedAt":"2026-11-01T00:00:01Z"}}}]}}
            """;

    @Test
    void aSlimPodIsTheSamePodToTheModelAndKeepsOnlyWhatItReads() {
        V1Pod fat = JSON.deserialize(FAT_POD, V1Pod.class);
        V1Pod slim = SlimObjects.pod(fat);
        FieldErrors errors = new FieldErrors(new ObjectRef("Pod", "shop", "web-7d9c"));
        assertThat(KubeObjects.pod(slim, errors)).isEqualTo(KubeObjects.pod(fat, errors));
        assertThat(errors.count()).isZero();
        assertThat(KubeObjects.pod(slim, errors).ports()).hasSize(3);

        assertThat(KubeObjects.pod(slim, errors).annotations()).containsOnlyKeys("kubernetes.io/egress-bandwidth", "kubernetes.io/ingress-bandwidth");

        // The cache keeps what the informer reads (name, namespace, version) beside the model's pod, nothing else.
        assertThat(slim).isInstanceOf(CachedPod.class);
        assertThat(slim.getMetadata().getResourceVersion()).isEqualTo("4711");
        assertThat(slim.getMetadata().getManagedFields()).isNull();
        assertThat(slim.getMetadata().getAnnotations()).isNull();
        assertThat(slim.getMetadata().getLabels()).as("in the model's pod").isNull();
        assertThat(slim.getMetadata().getOwnerReferences()).isNull();
        assertThat(slim.getSpec()).isNull();
        assertThat(slim.getStatus()).isNull();
        assertThat(SlimObjects.slim(slim)).as("cut once: a listed page, then the informer's transform").isSameAs(slim);
        var model = KubeObjects.pod(slim, errors);
        assertThat(model.namespace()).as("repeated strings are one instance across pods").isSameAs("shop".intern());
        assertThat(model.labels().get("app")).isSameAs("web".intern());
    }

    @Test
    void theCacheGivesBackEveryResourceVersionAsItCameAndPodsOfOneTemplateShareTheirLabelsAndPorts() {
        for (String rv : new String[] {"4711", "0", "007", "12345678901234567890", "a1b2", "", "-3"}) {
            V1Pod pod = JSON.deserialize(FAT_POD, V1Pod.class);
            pod.getMetadata().setResourceVersion(rv);
            assertThat(SlimObjects.pod(pod).getMetadata().getResourceVersion()).as(rv).isEqualTo(rv);
        }
        V1Pod noVersion = JSON.deserialize(FAT_POD, V1Pod.class);
        noVersion.getMetadata().setResourceVersion(null);
        assertThat(SlimObjects.pod(noVersion).getMetadata().getResourceVersion()).isNull();
        assertThat(SlimObjects.pod(noVersion)).isNotEqualTo(SlimObjects.pod(JSON.deserialize(FAT_POD, V1Pod.class)));

        V1Pod other = JSON.deserialize(FAT_POD, V1Pod.class);
        other.getMetadata().setName("web-8e0d");
        FieldErrors errors = new FieldErrors(new ObjectRef("Pod", "shop", "web"));
        var a = KubeObjects.pod(SlimObjects.pod(JSON.deserialize(FAT_POD, V1Pod.class)), errors);
        var b = KubeObjects.pod(SlimObjects.pod(other), errors);
        assertThat(b.labels()).isSameAs(a.labels());
        assertThat(b.ports()).isSameAs(a.ports());
    }

    @Test
    void aPodsFieldErrorsAndRefusalTravelWithItInTheCache() {
        V1Pod badPort = JSON.deserialize("{\"metadata\":{\"name\":\"p\",\"namespace\":\"x\"},\"spec\":{\"containers\":"
                + "[{\"name\":\"c\",\"ports\":[{\"containerPort\":80,\"protocol\":\"QUIC\"},{\"containerPort\":81}]}]},"
                + "\"status\":{\"podIP\":\"10.0.0.9\"}}", V1Pod.class);
        FieldErrors direct = new FieldErrors(new ObjectRef("Pod", "x", "p"));
        FieldErrors cached = new FieldErrors(new ObjectRef("Pod", "x", "p"));
        assertThat(KubeObjects.pod(SlimObjects.pod(badPort), cached)).isEqualTo(KubeObjects.pod(badPort, direct));
        assertThat(cached.list()).isNotEmpty().isEqualTo(direct.list());

        V1Pod badAddress = JSON.deserialize("{\"metadata\":{\"name\":\"q\",\"namespace\":\"x\"},\"status\":{\"podIP\":\"10.0.0.300\"}}",
                V1Pod.class);
        FieldErrors e1 = new FieldErrors(new ObjectRef("Pod", "x", "q"));
        FieldErrors e2 = new FieldErrors(new ObjectRef("Pod", "x", "q"));
        String directWords = outcome(() -> KubeObjects.pod(badAddress, e1));
        assertThat(outcome(() -> KubeObjects.pod(SlimObjects.pod(badAddress), e2))).isEqualTo(directWords);
        assertThat(e2.list()).isEqualTo(e1.list());
    }

    /** What a conversion gives: the pod, or the words it was refused with. */
    private static String outcome(java.util.function.Supplier<Object> convert) {
        try {
            return String.valueOf(convert.get());
        } catch (IllegalArgumentException e) {
            return "refused: " + e.getMessage();
        }
    }

    @Test
    void anotherPodKeepsNoAnnotationsAndNoPortsItDoesNotHave() {
        V1Pod bare = JSON.deserialize("{\"metadata\":{\"name\":\"p\",\"namespace\":\"x\",\"annotations\":{\"a\":\"b\"}},\"spec\":{\"containers\":"
                + "[{\"name\":\"c\",\"image\":\"i\"}]},\"status\":{}}", V1Pod.class);
        V1Pod slim = SlimObjects.pod(bare);
        FieldErrors errors = new FieldErrors(new ObjectRef("Pod", "x", "p"));
        assertThat(KubeObjects.pod(slim, errors)).isEqualTo(KubeObjects.pod(bare, errors));
        assertThat(slim.getMetadata().getAnnotations()).isNull();
    }

    @Test
    void aSlimPolicyAndNamespaceAreTheSameToTheModel() {
        V1NetworkPolicy fat = JSON.deserialize("""
                {"metadata":{"name":"db","namespace":"shop","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"},
                 "managedFields":[{"manager":"kubectl"}]},
                 "spec":{"podSelector":{"matchLabels":{"app":"db"}},"policyTypes":["Ingress","Egress"],
                  "ingress":[{"from":[{"namespaceSelector":{"matchExpressions":[{"key":"team","operator":"In","values":["a"]}]},
                    "podSelector":{}}],"ports":[{"port":"http","protocol":"TCP"},{"port":5000,"endPort":5010}]}],
                  "egress":[{"to":[{"ipBlock":{"cidr":"10.0.0.0/8","except":["10.1.0.0/16"]}}]}]}}
                """, V1NetworkPolicy.class);
        V1NetworkPolicy slim = SlimObjects.policy(fat);
        assertThat(KubeObjects.policy(slim)).isEqualTo(KubeObjects.policy(fat));
        assertThat(slim.getMetadata().getManagedFields()).isNull();
        assertThat(slim.getMetadata().getAnnotations()).isNull();

        V1Namespace ns = JSON.deserialize("{\"metadata\":{\"name\":\"shop\",\"labels\":{\"team\":\"a\"},\"managedFields\":[{}]}}", V1Namespace.class);
        assertThat(KubeObjects.namespace(SlimObjects.namespace(ns))).isEqualTo(KubeObjects.namespace(ns));
        assertThat(SlimObjects.slim(ns)).isNotSameAs(ns);
    }
}
