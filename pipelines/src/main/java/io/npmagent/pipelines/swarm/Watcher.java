package io.npmagent.pipelines.swarm;

import io.kubernetes.client.openapi.ApiException;
import io.npmagent.agent.source.k8s.PodWatchList;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One agent-shaped watcher: a node's agent as the API server sees it. Its own connection, the agent's
 * token and User-Agent, and the agent's requests replayed ({@link AgentRequests}): each collection
 * listed page by page (or read as a WatchList, up to the bookmark that ends its initial events), then
 * watched from the list's resourceVersion; a watch that ends is opened again
 * from the last resourceVersion read, one that answers 410 Gone is a relist, as client-java's reflector
 * does. It reads every byte and counts events ({@link WatchEventScanner}); a timing watcher also notes
 * when each pod event arrived ({@link DeliveryLog}). {@link #pause} stops reading, as a long GC pause
 * would; {@link #restart} is the agent's pod restarting: new connection, full lists.
 */
final class Watcher {
    private static final String PODS = "pods";
    /** Threads that read WatchLists' initial events, blocking; one a list at a time, only while it is read. */
    private static final ExecutorService READERS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "swarm-watch-list");
        t.setDaemon(true);
        return t;
    });

    private final ApiAccess api;
    private final AgentRequests requests;
    private final Executor executor;
    private final ScheduledExecutorService retries;
    private final SwarmStats stats;
    private final DeliveryLog timing;
    private final Set<Stream> streams = ConcurrentHashMap.newKeySet();
    /** List pages on their way: a restart or a stop abandons them (cancelling the exchange resets its HTTP/2 stream). */
    private final Set<java.util.concurrent.CompletableFuture<?>> pages = ConcurrentHashMap.newKeySet();
    private final AtomicInteger synced = new AtomicInteger();
    private volatile int generation;
    private volatile HttpClient client;
    private volatile boolean paused;
    private volatile boolean inSync;

    /** @param timing where pod events' arrival is noted, or null for a watcher that only counts */
    Watcher(ApiAccess api, AgentRequests requests, Executor executor, ScheduledExecutorService retries, SwarmStats stats, DeliveryLog timing) {
        this.api = api;
        this.requests = requests;
        this.executor = executor;
        this.retries = retries;
        this.stats = stats;
        this.timing = timing;
    }

    synchronized void start() {
        int gen = ++generation;
        client = api.newClient(executor);
        inSync = false;
        synced.set(0);
        for (AgentRequests.Poll poll : requests.gets()) {
            poll(poll, gen, true);
        }
        for (AgentRequests.Informer informer : requests.informers()) {
            new InformerLoop(informer, gen).list(null);
        }
    }

    /** A GET the agent makes, now and (if it repeats) again at its period, from a random phase as agents started at different times would. */
    private void poll(AgentRequests.Poll poll, int gen, boolean first) {
        HttpClient c = client;
        if (gen != generation || c == null) {
            return;
        }
        c.sendAsync(api.get(poll.uri(), ApiAccess.JSON), HttpResponse.BodyHandlers.discarding());
        if (poll.period() != null) {
            long period = poll.period().toMillis();
            long delay = first ? ThreadLocalRandom.current().nextLong(period) + 1 : period;
            retries.schedule(() -> poll(poll, gen, false), delay, TimeUnit.MILLISECONDS);
        }
    }

    /** The agent's pod restarting: every stream closed, a new connection, every collection listed again. */
    synchronized void restart() {
        stop();
        start();
    }

    synchronized void stop() {
        generation++;
        streams.forEach(Stream::cancel);
        streams.clear();
        pages.forEach(p -> p.cancel(true));
        pages.clear();
        // Java 17's HttpClient has no close: once nothing refers to it and no exchange is open, its
        // selector thread ends and closes the connection.
        client = null;
    }

    /** Whether every collection is listed and watched since the last (re)start. */
    boolean inSync() {
        return inSync;
    }

    DeliveryLog timing() {
        return timing;
    }

    void pause() {
        paused = true;
    }

    void resume() {
        paused = false;
        streams.forEach(Stream::resume);
    }

    /** One collection: list (every page), then watch, again and again. */
    private final class InformerLoop {
        private final AgentRequests.Informer informer;
        private final int gen;
        private final boolean pods;
        private long resourceVersion;
        private boolean counted;

        InformerLoop(AgentRequests.Informer informer, int gen) {
            this.informer = informer;
            this.gen = gen;
            this.pods = PODS.equals(informer.resource());
        }

        private boolean current() {
            return gen == generation;
        }

        void list(String cont) {
            if (!current()) {
                return;
            }
            if (informer.watchList()) {
                watchList();
                return;
            }
            String query = cont == null ? informer.listQuery()
                    : informer.pageQuery() != null ? informer.pageQuery().replace("{continue}", URLEncoder.encode(cont, StandardCharsets.UTF_8))
                    : "limit=" + informer.limit() + "&continue=" + URLEncoder.encode(cont, StandardCharsets.UTF_8);
            HttpClient c = client;
            if (c == null) {
                return;
            }
            ListPage page = new ListPage();
            var exchange = c.sendAsync(api.get(informer.path() + "?" + query, informer.accept()), page::subscriber);
            pages.add(exchange);
            exchange.whenComplete((r, err) -> {
                pages.remove(exchange);
                if (!current()) {
                    return;
                }
                if (err == null && page.status == 429) {
                    // Refused for load: the page is asked again after the server's Retry-After, as the agent's
                    // PagedListerWatcher does, not the list.
                    stats.failed("list page 429");
                    retries.schedule(() -> list(cont), page.retryAfterSeconds, TimeUnit.SECONDS);
                    return;
                }
                if (err != null || page.status != 200) {
                    // A continue token older than etcd's last compaction is 410 Gone: the list starts over.
                    stats.failed(err != null ? "list page broken (" + err.getClass().getSimpleName() + ")" : "list page " + page.status);
                    later(() -> list(null));
                    return;
                }
                stats.listPages.increment();
                stats.listBytes.add(page.bytes);
                String next;
                try {
                    next = page.continueToken();
                    if (next.isEmpty()) {
                        resourceVersion = page.resourceVersion();
                    }
                } catch (RuntimeException e) {
                    stats.failed("list page unreadable");
                    later(() -> list(null));
                    return;
                }
                if (!next.isEmpty()) {
                    list(next);
                } else {
                    watch();
                }
            });
        }

        /** The agent's WatchList: every object as an event up to the bookmark that ends them, counted as it is read, then the watch. */
        private void watchList() {
            HttpClient c = client;
            if (c == null) {
                return;
            }
            var exchange = c.sendAsync(api.get(informer.path() + "?" + informer.listQuery(), informer.accept()), HttpResponse.BodyHandlers.ofInputStream());
            pages.add(exchange);
            exchange.whenComplete((r, err) -> {
                pages.remove(exchange);
                if (err != null) {
                    listAgainAfter("watch list broken (" + err.getClass().getSimpleName() + ")");
                    return;
                }
                READERS.execute(() -> readWatchList(r));
            });
        }

        /** Reads a WatchList's initial events on a thread of its own (the stream is read blocking), then watches from its bookmark. */
        private void readWatchList(HttpResponse<InputStream> r) {
            try (InputStream in = r.body()) {
                if (!current()) {
                    return;
                }
                if (r.statusCode() == 429) {
                    stats.failed("watch list 429"); // refused for load: asked again after Retry-After, as the agent's PagedListerWatcher does
                    retries.schedule(() -> list(null), ListPage.retryAfterSeconds(r.headers()), TimeUnit.SECONDS);
                    return;
                }
                if (r.statusCode() != 200) {
                    listAgainAfter("watch list " + r.statusCode());
                    return;
                }
                long[] bytes = {0};
                String version = PodWatchList.initialEvents(in, raw -> {
                    if (!current()) {
                        throw new IOException("abandoned by a restart");
                    }
                    bytes[0] += raw.size();
                });
                stats.listPages.increment();
                stats.listBytes.add(bytes[0]);
                resourceVersion = Long.parseLong(version);
                watch();
            } catch (ApiException e) {
                listAgainAfter("watch list " + e.getCode());
            } catch (IOException | RuntimeException e) {
                listAgainAfter("watch list broken (" + e.getClass().getSimpleName() + ")");
            }
        }

        /** A WatchList that failed, counted by kind and asked again a second later (unless a restart abandoned it). */
        private void listAgainAfter(String failure) {
            if (current()) {
                stats.failed(failure);
                later(() -> list(null));
            }
        }

        void watch() {
            HttpClient c = client;
            if (!current() || c == null) {
                return;
            }
            String query = informer.watchQuery().replace("{rv}", Long.toString(resourceVersion))
                    .replace("{timeout}", Integer.toString(300 + ThreadLocalRandom.current().nextInt(300)));
            Stream stream = new Stream(this);
            c.sendAsync(api.get(informer.path() + "?" + query, informer.accept()), info -> {
                stream.status = info.statusCode();
                if (info.headers().firstValue("content-encoding").isPresent()) {
                    stats.failed("watch compressed"); // the scanners read plain lines or frames: a compressed watch would go uncounted
                }
                if (info.statusCode() == 200 && !counted) {
                    counted = true;
                    if (synced.incrementAndGet() == requests.informers().size()) {
                        inSync = true;
                    }
                }
                return HttpResponse.BodySubscribers.fromSubscriber(stream);
            }).whenComplete((r, err) -> {
                streams.remove(stream);
                if (!current()) {
                    return;
                }
                if (stream.status == 410 || stream.gone) {
                    stats.relists.increment();
                    if (timing != null && pods) {
                        timing.relisted();
                    }
                    list(null);
                } else if (err != null || stream.status != 200) {
                    stats.failed(err != null ? "watch broken (" + err.getClass().getSimpleName() + ")" : "watch " + stream.status);
                    later(this::watch);
                } else {
                    stats.rewatches.increment();
                    watch();
                }
            });
        }

        /** @param name null for a bookmark: where the watch resumes, and no change delivered */
        void event(String name, long rv, boolean error, int bytes) {
            if (name == null) {
                resourceVersion = rv > 0 ? rv : resourceVersion;
                return;
            }
            stats.events.increment();
            stats.eventBytes.add(bytes);
            if (rv > 0 && !error) {
                resourceVersion = rv;
            }
            if (timing != null && pods && !error) {
                timing.event(name, System.nanoTime());
            }
        }

        private void later(Runnable r) {
            retries.schedule(r, 1, TimeUnit.SECONDS);
        }
    }

    /** A watch's body as it arrives, read one chunk at a time; withheld while the watcher is paused. */
    private final class Stream implements Flow.Subscriber<List<ByteBuffer>> {
        private final InformerLoop loop;
        /** The watch's bytes to its events: JSON lines, or protobuf frames (the agent's pods). */
        private final java.util.function.Consumer<ByteBuffer> scanner;
        private Flow.Subscription subscription;
        private boolean waiting;
        volatile int status;
        volatile boolean gone;

        Stream(InformerLoop loop) {
            this.loop = loop;
            WatchEventScanner.Sink sink = (name, rv, error, bytes) -> {
                if (error) {
                    gone = true;
                }
                loop.event(name, rv, error, bytes);
            };
            this.scanner = loop.informer.protobufWatch() ? new WatchFrameScanner(sink)::feed : new WatchEventScanner(sink)::feed;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            synchronized (this) {
                subscription = s;
            }
            streams.add(this);
            if (!loop.current()) {
                s.cancel();
                return;
            }
            demand();
        }

        @Override
        public void onNext(List<ByteBuffer> buffers) {
            for (ByteBuffer b : buffers) {
                scanner.accept(b);
            }
            demand();
        }

        private synchronized void demand() {
            if (paused) {
                waiting = true;
            } else {
                subscription.request(1);
            }
        }

        synchronized void resume() {
            if (waiting && subscription != null) {
                waiting = false;
                subscription.request(1);
            }
        }

        synchronized void cancel() {
            if (subscription != null) {
                subscription.cancel();
            }
        }

        @Override
        public void onError(Throwable t) {
            streams.remove(this);
        }

        @Override
        public void onComplete() {
            streams.remove(this);
        }
    }
}
