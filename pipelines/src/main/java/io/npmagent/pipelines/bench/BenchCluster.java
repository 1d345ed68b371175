package io.npmagent.pipelines.bench;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.utils.Serialization;

/**
 * The clusters the informer benchmark and the scale pipeline serve: namespaces of 100 pods each, pods as a Deployment makes
 * them and an API server returns them (managedFields, owner references, env, volumes, probes,
 * container statuses: about 3 KB of JSON each), and policies spread over the namespaces, each
 * selecting one app and admitting another app and a team's namespaces on a port.
 */
public final class BenchCluster {
    public static final int PODS_PER_NAMESPACE = 100;
    public static final int APPS = 10;
    public static final String NODE = "node-1";
    /** Pods on the benchmark's own node: what a node of 110 pods has. */
    public static final int LOCAL_PODS = 110;

    private BenchCluster() {}

    public static int namespaces(int pods) {
        return (pods + PODS_PER_NAMESPACE - 1) / PODS_PER_NAMESPACE;
    }

    /** Creates the cluster through the API server. */
    public static void write(BenchApiServer api, int pods, int policies) {
        int namespaces = namespaces(pods);
        for (int n = 0; n < namespaces; n++) {
            api.create(Serialization.unmarshal("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ns-" + n
                    + "\",\"labels\":{\"kubernetes.io/metadata.name\":\"ns-" + n + "\",\"team\":\"t" + (n % 7) + "\"}}}", Namespace.class));
        }
        for (int i = 0; i < pods; i++) {
            Pod pod = pod(i, pods);
            api.create(pod);
        }
        for (int i = 0; i < policies; i++) {
            NetworkPolicy policy = policy(i, namespaces);
            api.create(policy);
        }
        api.flush();
    }

    /** Pod i: every {@code pods / LOCAL_PODS}-th one runs on this node. */
    static Pod pod(int i, int pods) {
        String node = i % Math.max(1, pods / LOCAL_PODS) == 0 ? NODE : "node-" + (2 + i % 997);
        return pod(i, node, address(i));
    }

    /** The address of pod i: 10.0.0.0 and up (pods of other nodes, in the scale pipeline). */
    public static String address(int i) {
        return "10." + ((i >> 16) & 255) + "." + ((i >> 8) & 255) + "." + (i & 255);
    }

    /** Pod i of namespace {@code ns-(i / 100)}, labelled {@code app-(i mod 10)}, on {@code node} at {@code ip}. */
    public static Pod pod(int i, String node, String ip) {
        int ns = i / PODS_PER_NAMESPACE;
        String app = "app-" + (i % APPS);
        String name = app + "-" + Integer.toHexString(0x10000 + i);
        String json = """
                {"apiVersion":"v1","kind":"Pod","metadata":{"name":"%1$s","namespace":"ns-%2$d","generateName":"%3$s-",
                 "labels":{"app":"%3$s","pod-template-hash":"5d8f7c9b4"},
                 "annotations":{"kubectl.kubernetes.io/restartedAt":"2026-11-01T00:00:00Z","prometheus.io/scrape":"true","prometheus.io/port":"9090"},
                 "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"%3$s-5d8f7c9b4","uid":"6f1d3c2e-0000-4000-8000-%4$012d","controller":true,"blockOwnerDeletion":true}],
                 "managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"2026-11-01T00:00:00Z","fieldsType":"FieldsV1",
                   "fieldsV1":{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{}}},
                   "f:spec":{"f:containers":{"k:{\\"name\\":\\"main\\"}":{".":{},"f:env":{},"f:image":{},"f:name":{},"f:ports":{},"f:resources":{}}}}}},
                  {"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2026-11-01T00:00:05Z","fieldsType":"FieldsV1","subresource":"status",
                   "fieldsV1":{"f:status":{"f:conditions":{},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{},"f:startTime":{}}}}]},
                 "spec":{"nodeName":"%5$s","serviceAccountName":"default","restartPolicy":"Always","dnsPolicy":"ClusterFirst","schedulerName":"default-scheduler",
                  "terminationGracePeriodSeconds":30,"enableServiceLinks":true,"priority":0,
                  "containers":[{"name":"main","image":"registry.example.com/%3$s:1.4.2","imagePullPolicy":"IfNotPresent",
                    "args":["--listen=:8080","--metrics=:9090"],
                    "env":[{"name":"POD_NAME","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}},{"name":"LOG_LEVEL","value":"info"}],
                    "ports":[{"name":"http","containerPort":8080,"protocol":"TCP"},{"name":"metrics","containerPort":9090,"protocol":"TCP"}],
                    "resources":{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"memory":"256Mi"}},
                    "readinessProbe":{"httpGet":{"path":"/ready","port":8080,"scheme":"HTTP"},"periodSeconds":10,"timeoutSeconds":1,"successThreshold":1,"failureThreshold":3},
                    "volumeMounts":[{"name":"kube-api-access","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true}],
                    "terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],
                  "volumes":[{"name":"kube-api-access","projected":{"defaultMode":420,"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},
                    {"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}}]}}],
                  "tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},
                    {"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]},
                 "status":{"phase":"Running","hostIP":"192.168.%6$d.%7$d","podIP":"%8$s","podIPs":[{"ip":"%8$s"}],"startTime":"2026-11-01T00:00:01Z","qosClass":"Burstable",
                  "conditions":[{"type":"Initialized","status":"True","lastTransitionTime":"2026-11-01T00:00:01Z"},
                    {"type":"Ready","status":"True","lastTransitionTime":"2026-11-01T00:00:05Z"},
                    {"type":"ContainersReady","status":"True","lastTransitionTime":"2026-11-01T00:00:05Z"},
                    {"type":"PodScheduled","status":"True","lastTransitionTime":"2026-11-01T00:00:00Z"}],
                  "containerStatuses":[{"name":"main","ready":true,"started":true,"restartCount":0,"image":"registry.example.com/%3$s:1.4.2",
                    "imageID":"registry.example.com/%3$s@sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945",
                    "containerID":"containerd://%4$064d","state":{"running":{"startedAt":"2026-11-01T00:00:04Z"}}}]}}
                """.formatted(name, ns, app, i, node, (i >> 8) & 255, i & 255, ip);
        return Serialization.unmarshal(json, Pod.class);
    }

    /** Policy i: in namespace i mod namespaces, selects one app, admits another app and one team's namespaces on one port. */
    public static NetworkPolicy policy(int i, int namespaces) {
        String json = """
                {"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"policy-%1$d","namespace":"ns-%2$d"},
                 "spec":{"podSelector":{"matchLabels":{"app":"app-%3$d"}},"policyTypes":["Ingress"],
                  "ingress":[{"from":[{"podSelector":{"matchLabels":{"app":"app-%4$d"}}},
                    {"namespaceSelector":{"matchLabels":{"team":"t%5$d"}},"podSelector":{"matchExpressions":[{"key":"app","operator":"In","values":["app-%4$d","app-%6$d"]}]}}],
                   "ports":[{"protocol":"TCP","port":%7$d}]}]}}
                """.formatted(i, i % namespaces, i % APPS, (i + 1) % APPS, i % 7, (i + 2) % APPS, i % 2 == 0 ? 8080 : 9090);
        return Serialization.unmarshal(json, NetworkPolicy.class);
    }
}
