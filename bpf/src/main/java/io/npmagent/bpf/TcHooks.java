package io.npmagent.bpf;

import io.npmagent.bpf.libbpf.BpfException;
import io.npmagent.bpf.libbpf.BpfProgram;
import io.npmagent.bpf.libbpf.NetnsThread;
import io.npmagent.bpf.libbpf.Tc;

/** Our two programs on a pod interface's tc hooks (from the pod: ingress; to the pod: egress), inside the pods' namespace. */
final class TcHooks implements Attachments.Hooks {
    private final NetnsThread netns;
    private final BpfProgram fromPod;
    private final BpfProgram toPod;
    private final BigTcp bigTcp;

    /** {@code bigTcp}: raises each interface attached to (null: leaves them as the CNI made them). */
    TcHooks(NetnsThread netns, BpfProgram fromPod, BpfProgram toPod, BigTcp bigTcp) {
        this.netns = netns;
        this.fromPod = fromPod;
        this.toPod = toPod;
        this.bigTcp = bigTcp;
    }

    @Override
    public void attach(int ifindex) {
        netns.run(() -> {
            Tc.attach(ifindex, Tc.Hook.INGRESS, fromPod);
            Tc.attach(ifindex, Tc.Hook.EGRESS, toPod);
            if (bigTcp != null) {
                bigTcp.raiseLogged(ifindex);
            }
        });
    }

    @Override
    public void detach(int ifindex) {
        netns.run(() -> detachHere(ifindex));
    }

    @Override
    public boolean ours(int ifindex) {
        return netns.get(() -> Tc.attachedProgramId(ifindex, Tc.Hook.INGRESS) == fromPod.id()
                && Tc.attachedProgramId(ifindex, Tc.Hook.EGRESS) == toPod.id());
    }

    /** Removes our filter from both hooks, on the calling thread (which must be in the pods' namespace). */
    static void detachHere(int ifindex) {
        try {
            Tc.detach(ifindex, Tc.Hook.INGRESS);
            Tc.detach(ifindex, Tc.Hook.EGRESS);
        } catch (BpfException gone) {
            // the interface went with its filters
        }
    }
}
