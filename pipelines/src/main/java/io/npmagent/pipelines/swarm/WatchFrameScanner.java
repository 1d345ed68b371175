package io.npmagent.pipelines.swarm;

import com.google.protobuf.InvalidProtocolBufferException;
import io.kubernetes.client.proto.Meta;
import io.npmagent.agent.source.k8s.ProtoFrames;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Reads a protobuf watch stream (the agent's pod watch, {@code PodWatchList#watch}) as the bytes arrive:
 * frames of a 4-byte length and a {@code WatchEvent}; of each event only its type and its object's name
 * and resourceVersion ({@link ProtoFrames#head}), as {@link WatchEventScanner} reads a JSON one. A bookmark
 * gives its version to the sink with a null name: it moves where a watch resumes, and is no delivery of a
 * change.
 */
final class WatchFrameScanner {
    private final WatchEventScanner.Sink sink;
    private final ByteBuffer length = ByteBuffer.allocate(4);
    private byte[] frame;
    private int filled;

    WatchFrameScanner(WatchEventScanner.Sink sink) {
        this.sink = sink;
    }

    void feed(ByteBuffer buffer) {
        while (buffer.hasRemaining()) {
            if (frame == null) {
                while (length.hasRemaining() && buffer.hasRemaining()) {
                    length.put(buffer.get());
                }
                if (length.hasRemaining()) {
                    return;
                }
                int n = length.flip().getInt();
                length.clear();
                if (n < 0 || n > ProtoFrames.MAX_FRAME) {
                    throw new IllegalStateException("a watch frame of " + n + " bytes");
                }
                frame = new byte[n];
                filled = 0;
            }
            int take = Math.min(frame.length - filled, buffer.remaining());
            buffer.get(frame, filled, take);
            filled += take;
            if (filled == frame.length) {
                event(frame);
                frame = null;
            }
        }
    }

    private void event(byte[] bytes) {
        try {
            Meta.WatchEvent e = Meta.WatchEvent.parseFrom(bytes);
            switch (e.getType()) {
                case "ERROR" -> sink.event("", -1, true, bytes.length + 4);
                case "BOOKMARK" -> sink.event(null, version(ProtoFrames.head(e.getObject().getRaw()).resourceVersion()), false, bytes.length + 4);
                default -> {
                    ProtoFrames.Head head = ProtoFrames.head(e.getObject().getRaw());
                    sink.event(head.name(), version(head.resourceVersion()), false, bytes.length + 4);
                }
            }
        } catch (InvalidProtocolBufferException unreadable) {
            throw new IllegalStateException("a watch frame that is no WatchEvent", unreadable);
        } catch (IOException unreadable) {
            throw new IllegalStateException("a watch event whose object is no protobuf", unreadable);
        }
    }

    private static long version(String v) {
        try {
            return v.isEmpty() ? -1 : Long.parseLong(v);
        } catch (NumberFormatException notANumber) {
            return -1;
        }
    }
}
