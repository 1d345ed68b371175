package io.npmagent.pipelines.swarm;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.Runtime;
import io.kubernetes.client.proto.V1;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A protobuf watch stream read as bytes, however its frames are cut into chunks: each event's object
 * name and resourceVersion, a bookmark's version with no name, and the server's ERROR.
 */
class WatchFrameScannerTest {
    record Seen(String name, long rv, boolean error, int bytes) {}

    private static byte[] frame(String type, com.google.protobuf.MessageLite object) throws IOException {
        ByteString wrapped = ByteString.copyFrom(new byte[] {'k', '8', 's', 0})
                .concat(Runtime.Unknown.newBuilder().setRaw(object.toByteString()).build().toByteString());
        byte[] event = Meta.WatchEvent.newBuilder().setType(type).setObject(Runtime.RawExtension.newBuilder().setRaw(wrapped)).build().toByteArray();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new DataOutputStream(out).writeInt(event.length);
        out.write(event);
        return out.toByteArray();
    }

    private static V1.Pod pod(String name, String version) {
        return V1.Pod.newBuilder().setMetadata(Meta.ObjectMeta.newBuilder().setName(name).setNamespace("ns-3").setGenerateName("app-1-")
                .setUid("u1").setResourceVersion(version).putLabels("name", "x"))
                .setSpec(V1.PodSpec.newBuilder().addContainers(V1.Container.newBuilder().setName("main"))).build();
    }

    @Test
    void eachFrameIsAnEventWithItsObjectsNameAndVersionInAnyChunks() throws IOException {
        byte[][] frames = {
                frame("ADDED", pod("swarm-7", "1042")),
                frame("BOOKMARK", V1.Pod.newBuilder().setMetadata(Meta.ObjectMeta.newBuilder().setResourceVersion("1050")).build()),
                frame("MODIFIED", pod("app-2-1000a", "1043")),
                frame("ERROR", Meta.Status.newBuilder().setCode(410).setReason("Expired").setMessage("too old resource version").build())};
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (byte[] f : frames) {
            all.write(f);
        }
        byte[] bytes = all.toByteArray();
        for (int chunk : List.of(1, 3, 7, bytes.length)) {
            List<Seen> seen = new ArrayList<>();
            WatchFrameScanner scanner = new WatchFrameScanner((name, rv, error, size) -> seen.add(new Seen(name, rv, error, size)));
            for (int at = 0; at < bytes.length; at += chunk) {
                scanner.feed(ByteBuffer.wrap(bytes, at, Math.min(chunk, bytes.length - at)));
            }
            assertThat(seen).as("in chunks of " + chunk).containsExactly(
                    new Seen("swarm-7", 1042, false, frames[0].length),
                    new Seen(null, 1050, false, frames[1].length),
                    new Seen("app-2-1000a", 1043, false, frames[2].length),
                    new Seen("", -1, true, frames[3].length));
        }
    }
}
