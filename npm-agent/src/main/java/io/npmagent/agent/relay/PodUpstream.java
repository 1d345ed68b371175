package io.npmagent.agent.relay;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.proto.V1;
import io.npmagent.agent.source.k8s.PodWatchList;
import io.npmagent.agent.source.k8s.ProtoFrames;
import io.npmagent.agent.source.k8s.ProtoSlim;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The relay's one read of the API server's pods, as an agent's would be: a WatchList, then a watch from its
 * bookmark, both in protobuf ({@link PodWatchList}), each pod slimmed in protobuf ({@link ProtoSlim}) into
 * the {@link PodFeed}. A watch that ends or breaks resumes from the last version read; a 410 Gone is a new
 * WatchList, which the feed turns into a 410 for every agent (what they missed is not in its window).
 */
public final class PodUpstream implements Runnable {
    private static final System.Logger LOG = System.getLogger(PodUpstream.class.getName());

    private final PodWatchList pods;
    private final PodFeed feed;
    private volatile boolean stopped;
    /** The last version read: where a watch resumes; null for a new WatchList. */
    private String version;

    public PodUpstream(ApiClient client, PodFeed feed) {
        this.pods = new PodWatchList(client, p -> p);
        this.feed = feed;
    }

    public void stop() {
        stopped = true;
    }

    @Override
    public void run() {
        while (!stopped) {
            try {
                if (version == null) {
                    list();
                }
                watch();
            } catch (ApiException e) {
                if (e.getCode() == 410) {
                    LOG.log(System.Logger.Level.INFO, "relay: the API server no longer has version {0}; listing pods again", version);
                    version = null;
                    continue;
                }
                LOG.log(System.Logger.Level.WARNING, "relay: reading pods failed ({0}); asked again in a second", e.getMessage());
                pause();
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "relay: reading pods broke off ({0}); resumed in a second", e.toString());
                pause();
            }
        }
    }

    private void list() throws ApiException {
        List<V1.Pod> slim = new ArrayList<>();
        String version = pods.listRaw("", raw -> slim.add(ProtoSlim.pod(ProtoFrames.object(raw, V1.Pod.parser()))));
        if (version == null) {
            throw new ApiException("the API server gives no WatchList of pods in protobuf, which the relay needs", 415, null, null);
        }
        feed.replace(slim, version);
        LOG.log(System.Logger.Level.INFO, "relay: {0} pods at version {1}", slim.size(), version);
        this.version = version;
    }

    /** One watch from the last version read until the server ends it or it breaks off. */
    private void watch() throws ApiException, IOException {
        int timeout = 300 + ThreadLocalRandom.current().nextInt(300); // as client-java's reflector: 5 to 10 minutes
        boolean served = pods.watchRaw(version, timeout, (type, raw) -> {
            if ("BOOKMARK".equals(type)) {
                version = ProtoFrames.head(raw).resourceVersion();
                feed.bookmark(version);
            } else {
                V1.Pod slim = ProtoSlim.pod(ProtoFrames.object(raw, V1.Pod.parser()));
                feed.changed(type, slim);
                version = slim.getMetadata().getResourceVersion();
            }
        });
        if (!served) {
            throw new ApiException("the API server gives no watch of pods in protobuf, which the relay needs", 415, null, null);
        }
    }

    private void pause() {
        try {
            Thread.sleep(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopped = true;
        }
    }
}
