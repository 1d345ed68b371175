package io.npmagent.agent.source.k8s;

import io.npmagent.dataplane.model.ObjectRef;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.Map;

/**
 * A name for a set of object versions, {@code (kind, namespace, name, resourceVersion)}, that does not
 * depend on the order they arrived in: the sum of a hash of each. The agent keeps one over what its
 * model thread has taken from the informers; a tool that lists the server computes one over what the
 * server holds now; equal digests mean the agent has seen exactly the server's objects. That is how
 * the sandbox's probe waits for "the agent has applied what the API server holds", with no clock and
 * no marker object. About 100 bytes an object.
 */
public final class StateDigest {
    private final Map<ObjectRef, Long> entries = new HashMap<>();
    private long sum;

    /** Takes a change: an upsert sets the object's version, a delete (no version) removes it; a repeat changes nothing. */
    public void take(ObjectChange c) {
        Long before = c.resourceVersion() == null ? entries.remove(c.ref()) : entries.put(c.ref(), hash(c.ref(), c.resourceVersion()));
        if (before != null) {
            sum -= before;
        }
        if (c.resourceVersion() != null) {
            sum += entries.get(c.ref());
        }
    }

    public int size() {
        return entries.size();
    }

    /** {@code <objects>-<hex>}, the same for the same set of versions in any JVM. */
    public String value() {
        return entries.size() + "-" + Long.toHexString(sum);
    }

    private static long hash(ObjectRef ref, String resourceVersion) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest((ref.kind() + "\0" + ref.namespace() + "\0" + ref.name() + "\0" + resourceVersion)
                    .getBytes(StandardCharsets.UTF_8));
            long h = 0;
            for (int i = 0; i < 8; i++) {
                h = (h << 8) | (d[i] & 0xff);
            }
            return h;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
