package io.npmagent.agent.relay;

import com.google.protobuf.ByteString;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.V1;
import io.npmagent.agent.source.k8s.ProtoFrames;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The relay's pods (npm-agent/README.md, "Design, not built: what the agent watches at thousands of
 * nodes"): every pod of the cluster, slim and in protobuf, and its recent changes, served to agents as
 * kube-apiserver serves the agent's WatchList and watch, so that an agent reads them with the same code
 * ({@code PodWatchList}, {@code PodWatch}). Each change is encoded into its frame once, however many
 * agents read it.
 *
 * <p>Versions are the API server's: an agent resumes from the last one it read, from this relay or
 * another. The feed keeps the last {@code window} changes; a watch from a version older than the
 * oldest is answered 410 Gone, as the API server answers, and the agent takes a new WatchList, from the
 * relay. A watcher that falls {@code queue} frames behind is cut off, as the API server cuts off an
 * unresponsive watcher: it watches again from the last version it read. When the relay itself had to
 * list the API server again ({@link #replace}), every watcher gets 410: what it missed is not in the
 * window.
 */
public final class PodFeed {
    /** The annotation of the bookmark that ends a WatchList's initial events, as kube-apiserver sends it. */
    static final String INITIAL_EVENTS_END = "k8s.io/initial-events-end";

    private record Change(long version, byte[] frame) {}

    private final int window;
    private final int queue;
    /** Every pod now, by namespace/name: its object as a frame's object is wrapped. */
    private final Map<String, ByteString> pods = new HashMap<>();
    private final ArrayDeque<Change> changes = new ArrayDeque<>();
    private final Set<Subscription> subscriptions = new HashSet<>();
    /** The version everything here is at; a watch from older than {@link #oldest} cannot be served from the window. */
    private long version;
    private long oldest;
    private boolean listed;

    /**
     * @param window how many changes a watch can resume across
     * @param queue  how many frames a watcher may fall behind before it is cut off
     */
    public PodFeed(int window, int queue) {
        this.window = window;
        this.queue = queue;
    }

    /** Every pod at {@code resourceVersion}, as the relay's WatchList of the API server gave them: a new start. */
    public synchronized void replace(List<V1.Pod> slim, String resourceVersion) {
        pods.clear();
        slim.forEach(p -> pods.put(key(p), ProtoFrames.wrap("Pod", p)));
        changes.clear();
        version = Long.parseLong(resourceVersion);
        oldest = version;
        listed = true;
        byte[] gone = gone("the relay listed the API server again at " + resourceVersion);
        new ArrayList<>(subscriptions).forEach(s -> s.end(gone));
    }

    /** A change of the API server's watch (ADDED, MODIFIED, DELETED), its pod slim, at the pod's version. */
    public synchronized void changed(String type, V1.Pod slim) {
        long at = Long.parseLong(slim.getMetadata().getResourceVersion());
        ByteString object = ProtoFrames.wrap("Pod", slim);
        if ("DELETED".equals(type)) {
            pods.remove(key(slim));
        } else {
            pods.put(key(slim), object);
        }
        byte[] frame = ProtoFrames.frame(type, object);
        changes.addLast(new Change(at, frame));
        while (changes.size() > window) {
            oldest = changes.removeFirst().version();
        }
        version = at;
        deliver(frame, at);
    }

    /** The API server's bookmark: nothing changed up to {@code resourceVersion}; passed on, so that watchers resume from it. */
    public synchronized void bookmark(String resourceVersion) {
        version = Long.parseLong(resourceVersion);
        deliver(bookmarkFrame(resourceVersion, false), version);
    }

    private void deliver(byte[] frame, long at) {
        for (Subscription s : new ArrayList<>(subscriptions)) {
            s.offer(frame, at);
        }
    }

    /**
     * A WatchList: every pod as ADDED, the bookmark that ends them, then every change. The pods are framed
     * as they are written, not here: a hundred agents starting at once would otherwise hold a hundred
     * framed copies of the cluster.
     */
    public synchronized Subscription watchList() {
        List<ByteString> objects = new ArrayList<>(pods.values());
        byte[] end = bookmarkFrame(Long.toString(version), true);
        return subscribe(() -> Stream.concat(objects.stream().map(o -> ProtoFrames.frame("ADDED", o)), Stream.of(end)).iterator(), version);
    }

    /** A watch from {@code from}: the changes after it, then every change; 410 Gone if the window no longer reaches back to it. */
    public synchronized Subscription watch(long from) {
        if (from < oldest) {
            Subscription s = new Subscription(this, List.of(gone("too old resource version: " + from + " (" + oldest + ")")), 1, from);
            s.end(null);
            return s;
        }
        List<byte[]> first = new ArrayList<>();
        for (Change c : changes) {
            if (c.version() > from) {
                first.add(c.frame());
            }
        }
        // A relay behind the one the agent read before (a replica that lags) passes on only what is newer.
        return subscribe(first, from);
    }

    private Subscription subscribe(Iterable<byte[]> first, long after) {
        Subscription s = new Subscription(this, first, queue, after);
        subscriptions.add(s);
        return s;
    }

    private synchronized void unsubscribe(Subscription s) {
        subscriptions.remove(s);
    }

    /** Whether the feed holds the API server's pods: until then it has nothing true to serve. */
    public synchronized boolean listed() {
        return listed;
    }

    public synchronized int watchers() {
        return subscriptions.size();
    }

    /** The ERROR event kube-apiserver ends a watch with when it cannot serve it from where it was asked: 410 Gone. */
    private static byte[] gone(String message) {
        return ProtoFrames.frame("ERROR", ProtoFrames.wrap("Status", Meta.Status.newBuilder().setStatus("Failure").setCode(410)
                .setReason("Expired").setMessage(message).build()));
    }

    private static byte[] bookmarkFrame(String resourceVersion, boolean initialEventsEnd) {
        Meta.ObjectMeta.Builder meta = Meta.ObjectMeta.newBuilder().setResourceVersion(resourceVersion);
        if (initialEventsEnd) {
            meta.putAnnotations(INITIAL_EVENTS_END, "true");
        }
        return ProtoFrames.frame("BOOKMARK", ProtoFrames.wrap("Pod", V1.Pod.newBuilder().setMetadata(meta).build()));
    }

    private static String key(V1.Pod pod) {
        return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    }

    /**
     * One watcher's stream: the frames it reads first (a WatchList's pods, or the changes it missed), then
     * the changes as they come, until it ends (cut off, or the relay listed again).
     */
    public static final class Subscription implements AutoCloseable {
        private final PodFeed feed;
        private final Iterable<byte[]> first;
        private final BlockingQueue<byte[]> live;
        /** Changes at or before this version are not passed on: the watcher has them. */
        private final long after;
        private volatile boolean ended;
        private volatile byte[] last;

        private Subscription(PodFeed feed, Iterable<byte[]> first, int queue, long after) {
            this.feed = feed;
            this.first = first;
            this.after = after;
            this.live = new ArrayBlockingQueue<>(queue);
        }

        /** What is written first, before any live change. */
        public Iterable<byte[]> first() {
            return first;
        }

        private void offer(byte[] frame, long at) {
            if (at <= after) {
                return;
            }
            if (!live.offer(frame)) {
                end(null); // fell behind: cut off, as kube-apiserver cuts an unresponsive watcher
            }
        }

        /** Ends the stream after what it holds, and {@code closing} (a 410) if given. */
        private void end(byte[] closing) {
            last = closing;
            ended = true;
            feed.unsubscribe(this);
        }

        /**
         * The next live frame, waiting up to {@code timeoutMs}; null when none came meanwhile or the stream
         * has ended ({@link #ended}).
         */
        public byte[] next(long timeoutMs) throws InterruptedException {
            byte[] f = live.poll();
            if (f != null) {
                return f;
            }
            if (ended) {
                byte[] closing = last;
                last = null;
                return closing;
            }
            return live.poll(timeoutMs, TimeUnit.MILLISECONDS);
        }

        /** Whether nothing more will come: the watcher fell behind, or the relay listed again. */
        public boolean ended() {
            return ended && live.isEmpty() && last == null;
        }

        @Override
        public void close() {
            ended = true;
            feed.unsubscribe(this);
        }
    }
}
