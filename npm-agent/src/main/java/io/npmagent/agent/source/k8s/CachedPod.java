package io.npmagent.agent.source.k8s;

import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.npmagent.dataplane.model.FieldErrors;
import io.npmagent.dataplane.model.ObjectRef;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.ValidationError;
import java.util.List;
import java.util.Objects;

/**
 * A pod as the informer cache keeps it: its name, namespace and resourceVersion (all the informer reads),
 * and the model's {@link Pod}, converted once as the pod enters the cache. The model thread takes that
 * same {@code Pod} into the compiler, so a pod's labels, addresses and ports are held once, not once
 * in the cache and again in the model: at 100,000 pods a slimmed {@code V1Pod} cost 1.4 KB each.
 * Its {@code V1ObjectMeta} is made when asked (the informer asks for its key and version as it takes an
 * event), not kept: at 150,000 pods a kept one was 11 MB. Its resourceVersion is opaque, but every API
 * server writes etcd's revision, a decimal number: that is held as a {@code long} (8 bytes, not a 50-byte
 * string), anything else as the string it is.
 *
 * <p>What the conversion found wrong travels with it: the field errors (the pod is kept without the bad
 * item) or the reason the pod cannot be held at all; {@link KubeObjects#pod} reports them as it would
 * have for the original.
 */
final class CachedPod extends V1Pod {
    private final String namespace;
    private final String name;
    /** The resourceVersion when it is a decimal number as {@link Long#toString} writes it; else unused. */
    private final long version;
    /** The resourceVersion when it is not such a number; else null. */
    private final String versionText;
    private final Pod model;
    private final List<ValidationError> errors;
    private final String refusal;

    private CachedPod(V1ObjectMeta meta, Pod model, List<ValidationError> errors, String refusal) {
        setMetadata(null);
        this.namespace = meta.getNamespace();
        this.name = meta.getName();
        String rv = meta.getResourceVersion();
        long number = decimal(rv);
        this.version = number;
        this.versionText = number < 0 ? rv : null;
        this.model = model;
        this.errors = errors;
        this.refusal = refusal;
    }

    /**
     * The cache's form of {@code pod}; itself if it is one already (a listed page is cut before the
     * informer's transform sees it). A pod without a name or namespace stays a slimmed {@code V1Pod}:
     * the source reports it and leaves it out.
     */
    static V1Pod of(V1Pod pod) {
        if (pod instanceof CachedPod) {
            return pod;
        }
        V1Pod slim = SlimObjects.fields(pod); // interned names and labels, which the model's Pod then shares
        V1ObjectMeta meta = slim.getMetadata();
        if (meta == null || meta.getName() == null || meta.getNamespace() == null) {
            return slim;
        }
        FieldErrors found = new FieldErrors(new ObjectRef("Pod", meta.getNamespace(), meta.getName()));
        try {
            Pod model = KubeObjects.pod(slim, found);
            return new CachedPod(meta, model, found.count() == 0 ? List.of() : found.list(), null);
        } catch (IllegalArgumentException e) {
            return new CachedPod(meta, null, List.of(), e.getMessage());
        }
    }

    /** The node the pod runs on, or null (not scheduled, or not a pod the model can hold). */
    static String nodeName(V1Pod pod) {
        if (pod instanceof CachedPod c) {
            return c.model == null ? null : c.model.nodeName();
        }
        return pod.getSpec() == null ? null : pod.getSpec().getNodeName();
    }

    /** Name, namespace and resourceVersion, every other field null. */
    @Override
    public V1ObjectMeta getMetadata() {
        return SlimObjects.identity(namespace, name, resourceVersion());
    }

    private String resourceVersion() {
        return versionText != null || version < 0 ? versionText : Long.toString(version);
    }

    /** {@code rv} as a number if {@link Long#toString} gives it back exactly; else -1. */
    private static long decimal(String rv) {
        if (rv == null || rv.isEmpty() || rv.length() > 18 || (rv.length() > 1 && rv.charAt(0) == '0')) {
            return -1;
        }
        long n = 0;
        for (int i = 0; i < rv.length(); i++) {
            char c = rv.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            n = n * 10 + (c - '0');
        }
        return n;
    }

    /** The model's pod, its field errors added to {@code to}; or the reason there is none. */
    Pod model(FieldErrors to) {
        if (refusal != null) {
            throw new IllegalArgumentException(refusal);
        }
        errors.forEach(e -> to.add(e.field(), e.reason()));
        return model;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CachedPod c && namespace.equals(c.namespace) && name.equals(c.name)
                && version == c.version && Objects.equals(versionText, c.versionText) && Objects.equals(model, c.model) && errors.equals(c.errors)
                && Objects.equals(refusal, c.refusal);
    }

    @Override
    public int hashCode() {
        return Objects.hash(namespace, name, version, versionText, model);
    }
}
