package io.npmagent.agent.source.k8s;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Parser;
import com.google.protobuf.WireFormat;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.Runtime;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;

/**
 * kube-apiserver's protobuf watch stream, as a WatchList and a watch send it: frames of a 4-byte
 * big-endian length and a {@code meta.v1.WatchEvent}, whose object is the magic number {@code k8s\0} and
 * a {@code runtime.Unknown} wrapping the object's own bytes.
 */
public final class ProtoFrames {
    /** What starts every protobuf object of kube-apiserver, before the {@code runtime.Unknown} that wraps it. */
    private static final int MAGIC = 0x6b387300; // "k8s\0"
    /** A frame larger than this is not a pod (etcd keeps objects under 1.5 MiB). */
    public static final int MAX_FRAME = 16 * 1024 * 1024;

    private ProtoFrames() {}

    /**
     * The next event of the stream.
     *
     * @return null where the stream ends between two frames (the server ended the watch)
     * @throws InvalidProtocolBufferException a whole frame that is no event
     * @throws IOException                    the stream broke off, or ended inside a frame
     */
    static Meta.WatchEvent next(DataInputStream in) throws IOException {
        int length;
        try {
            length = in.readInt();
        } catch (EOFException end) {
            return null;
        }
        if (length < 0 || length > MAX_FRAME) {
            throw new IOException("a watch frame of " + length + " bytes");
        }
        byte[] frame = new byte[length];
        in.readFully(frame);
        return Meta.WatchEvent.parseFrom(frame);
    }

    /**
     * An event's object, read with {@code parser} from inside its {@code runtime.Unknown}.
     *
     * @throws InvalidProtocolBufferException it is no such object
     */
    public static <M> M object(ByteString bytes, Parser<M> parser) throws InvalidProtocolBufferException {
        return parser.parseFrom(unwrapped(bytes));
    }

    private static ByteString unwrapped(ByteString bytes) throws InvalidProtocolBufferException {
        if (bytes.size() < 4 || bytes.substring(0, 4).asReadOnlyByteBuffer().getInt() != MAGIC) {
            throw new InvalidProtocolBufferException("a watch event's object is not protobuf");
        }
        return Runtime.Unknown.parseFrom(bytes.substring(4)).getRaw();
    }

    /** {@code object} as kube-apiserver wraps one: the magic number, then a {@code runtime.Unknown} of its kind. */
    public static ByteString wrap(String kind, com.google.protobuf.MessageLite object) {
        Runtime.Unknown unknown = Runtime.Unknown.newBuilder().setTypeMeta(Runtime.TypeMeta.newBuilder().setApiVersion("v1").setKind(kind))
                .setRaw(object.toByteString()).build();
        return ByteString.copyFrom(new byte[] {'k', '8', 's', 0}).concat(unknown.toByteString());
    }

    /** One frame of a watch stream: the event's length, then the event, whose object is {@code wrapped} ({@link #wrap}). */
    public static byte[] frame(String type, ByteString wrapped) {
        byte[] event = Meta.WatchEvent.newBuilder().setType(type).setObject(Runtime.RawExtension.newBuilder().setRaw(wrapped)).build().toByteArray();
        return java.nio.ByteBuffer.allocate(4 + event.length).putInt(event.length).put(event).array();
    }

    /** An object's name and resourceVersion. */
    public record Head(String name, String resourceVersion) {}

    /**
     * The name and resourceVersion of an event's object (a pod, or a bookmark's) without decoding the rest:
     * the swarm's watchers read every event of a hundred agents on one core. Every Kubernetes object has its
     * {@code ObjectMeta} as field 1, in which the name is field 1 and the resourceVersion field 6.
     */
    public static Head head(ByteString bytes) throws IOException {
        CodedInputStream object = unwrapped(bytes).newCodedInput();
        for (int tag; (tag = object.readTag()) != 0; ) {
            if (WireFormat.getTagFieldNumber(tag) != 1) {
                object.skipField(tag);
                continue;
            }
            CodedInputStream meta = object.readBytes().newCodedInput();
            String name = "";
            String version = "";
            for (int t; (t = meta.readTag()) != 0; ) {
                switch (WireFormat.getTagFieldNumber(t)) {
                    case 1 -> name = meta.readStringRequireUtf8();
                    case 6 -> version = meta.readStringRequireUtf8();
                    default -> meta.skipField(t);
                }
            }
            return new Head(name, version);
        }
        return new Head("", "");
    }
}
