package io.npmagent.bpf.libbpf;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

/**
 * tc_pod.o as the tests need it: the compiled object, and keys and values of its maps laid out as in
 * lib/*.h (native byte order for integers, network order for ports). The real encoders are the map
 * classes of io.npmagent.bpf.maps; these few are only for exercising the binding.
 */
final class TcPod {
    private TcPod() {}

    static final byte[] ELF = BpfObject.resource("tc_pod.o");

    static final String FROM_POD = "npm_from_pod";
    static final String TO_POD = "npm_to_pod";
    static final String FORWARD = "npm_forward";

    static final int NPM_INGRESS = 0;
    static final int NPM_EGRESS = 1;
    /** What the programs return for a packet they let through: TC_ACT_UNSPEC, so later filters still run. */
    static final int PASS = -1;
    static final int TC_ACT_SHOT = 2;

    /** Opens and loads tc_pod.o with its maps pinned under {@code pinRoot} (null: unpinned). */
    static BpfObject load(Path pinRoot) {
        BpfObject object = BpfObject.open(ELF, "tc_pod", pinRoot);
        try {
            // libbpf 1.1 knows no "netfilter" section: the program's type is given, as BpfBackend gives it.
            object.prepareProgram(FORWARD, NetfilterLink.programsSupported(), NetfilterLink.PROG_TYPE_NETFILTER,
                    NetfilterLink.ATTACH_NETFILTER);
            object.load();
            return object;
        } catch (RuntimeException e) {
            object.close();
            throw e;
        }
    }

    /** struct npm_policy_key: 20 bytes. */
    static byte[] policyKey(int prefixlen, int version, int direction, int endpoint, int identity, int protocol, int port) {
        ByteBuffer b = ByteBuffer.allocate(20).order(ByteOrder.nativeOrder());
        b.putInt(prefixlen).put((byte) version).put((byte) direction).putShort((short) 0)
                .putInt(endpoint).putInt(identity).put((byte) protocol).put((byte) 0);
        b.order(ByteOrder.BIG_ENDIAN).putShort((short) port);
        return b.array();
    }

    /** struct npm_policy_value: a verdict (1 allow, 2 deny). */
    static byte[] rules(int n) {
        return u32(n);
    }

    /** struct npm_endpoint_key: ifindex, version. */
    static byte[] endpointKey(int ifindex, int version) {
        return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putInt(ifindex).put((byte) version).array();
    }

    /** struct npm_endpoint: id, judged[ingress], judged[egress] (isolated: a miss is denied), no rate limits, the default congestion control, no tier tables. */
    static byte[] endpoint(int id, boolean isolatedIngress, boolean isolatedEgress) {
        return ByteBuffer.allocate(io.npmagent.bpf.maps.EndpointMap.VALUE_SIZE).order(ByteOrder.nativeOrder()).putInt(id)
                .put((byte) (isolatedIngress ? 1 : 0)).put((byte) (isolatedEgress ? 1 : 0)).array();
    }

    /** struct npm_drop_key. */
    static byte[] dropKey(int endpoint, int direction) {
        return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putInt(endpoint).put((byte) direction).array();
    }

    static byte[] u32(int n) {
        return ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(n).array();
    }

    static int u32(byte[] b, int offset) {
        return ByteBuffer.wrap(b).order(ByteOrder.nativeOrder()).getInt(offset);
    }

    static long u64(byte[] b, int offset) {
        return ByteBuffer.wrap(b).order(ByteOrder.nativeOrder()).getLong(offset);
    }
}
