package io.npmagent.agent.source.k8s;

import com.google.protobuf.InvalidProtocolBufferException;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Status;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.V1;
import io.kubernetes.client.util.Watch;
import io.kubernetes.client.util.Watchable;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.Iterator;
import java.util.NoSuchElementException;
import okhttp3.Response;

/**
 * A watch of pods read in protobuf ({@link ProtoFrames}), as the reflector reads client-java's JSON
 * watch: each event's pod as {@link PodWatchList#pod} reads it (the informer's transform slims it), an
 * ERROR as the server's Status (410 Gone makes the reflector relist).
 *
 * <p>Where the stream breaks off, the watch ends as if the server had ended it, and the reflector
 * watches again from the last version it read. client-java's JSON watch throws instead, which its
 * reflector answers with a whole relist: at 100,000 pods a list costs the API server seconds of CPU,
 * where a resumed watch costs it the events missed. A frame that arrived whole but is no pod event
 * still ends in a relist: resuming would read it again.
 */
final class PodWatch implements Watchable<V1Pod> {
    private static final System.Logger LOG = System.getLogger(PodWatch.class.getName());

    private final Response response;
    private final DataInputStream in;
    private Watch.Response<V1Pod> next;
    private boolean ended;

    /** @param response a successful answer in protobuf; closed by {@link #close} */
    PodWatch(Response response) {
        this.response = response;
        this.in = new DataInputStream(response.body().byteStream());
    }

    @Override
    public boolean hasNext() {
        if (next == null && !ended) {
            next = read();
            ended = next == null;
        }
        return next != null;
    }

    @Override
    public Watch.Response<V1Pod> next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        Watch.Response<V1Pod> r = next;
        next = null;
        return r;
    }

    private Watch.Response<V1Pod> read() {
        try {
            Meta.WatchEvent event = ProtoFrames.next(in);
            if (event == null) {
                return null;
            }
            String type = event.getType();
            if ("ERROR".equals(type)) {
                return new Watch.Response<>(type, status(ProtoFrames.object(event.getObject().getRaw(), Meta.Status.parser())));
            }
            return new Watch.Response<>(type, PodWatchList.pod(ProtoFrames.object(event.getObject().getRaw(), V1.Pod.parser())));
        } catch (InvalidProtocolBufferException e) {
            // A whole frame that is no pod event: watching again from the same version would read it again.
            // client-java's reflector relists on this message, as it does where its JSON watch breaks.
            throw new RuntimeException("IO Exception during hasNext: an unreadable pod event: " + e.getMessage(), e);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "the watch of pods broke off ({0}); it is watched again from the last version read", e.toString());
            return null;
        }
    }

    private static V1Status status(Meta.Status s) {
        return new V1Status().code(s.getCode()).reason(s.getReason()).message(s.getMessage()).status(s.getStatus());
    }

    @Override
    public Iterator<Watch.Response<V1Pod>> iterator() {
        return this;
    }

    @Override
    public void remove() {
        throw new UnsupportedOperationException();
    }

    @Override
    public void close() {
        response.close();
    }
}
