package io.npmagent.bpf;

import io.npmagent.bpf.libbpf.BpfException;
import io.npmagent.dataplane.model.PodKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * Which interfaces run our programs, and the pod behind each: attached when a pod is placed, detached
 * when its interface carries no pod any more, attached again where a CNI or a restarted pod replaced
 * or removed them.
 */
final class Attachments {
    private static final System.Logger LOG = System.getLogger(Attachments.class.getName());

    /** The tc side: both programs on one interface's hooks. */
    interface Hooks {
        void attach(int ifindex);

        void detach(int ifindex);

        /** Whether both hooks of the interface run this run's programs. */
        boolean ours(int ifindex);
    }

    private final Hooks hooks;
    private final Map<Integer, PodKey> attached = new HashMap<>();

    Attachments(Hooks hooks) {
        this.hooks = hooks;
    }

    /**
     * Attaches to those of {@code interfaces} that carry a pod ({@code podOfInterface}) and detaches from
     * the others; a pod whose interface refused (it vanished meanwhile) goes into {@code unplaced}, tried
     * again at the next batch.
     */
    void attachAndDetach(Set<Integer> interfaces, Map<Integer, PodKey> podOfInterface, Set<PodKey> unplaced) {
        for (int ifindex : interfaces) {
            PodKey pod = podOfInterface.get(ifindex);
            if (pod != null && !attached.containsKey(ifindex)) {
                attach(ifindex, pod, unplaced);
            } else if (pod != null) {
                attached.put(ifindex, pod);
            } else if (attached.remove(ifindex) != null) {
                hooks.detach(ifindex);
            }
        }
    }

    /** Attaches again wherever our programs were replaced or removed; returns how many interfaces. */
    int repair(Set<PodKey> unplaced) {
        int repaired = 0;
        for (Map.Entry<Integer, PodKey> e : new ArrayList<>(attached.entrySet())) {
            if (!hooks.ours(e.getKey())) {
                LOG.log(System.Logger.Level.WARNING, "bpf: the programs on interface {0} ({1}) were replaced or removed; attaching again",
                        e.getKey(), e.getValue());
                attach(e.getKey(), e.getValue(), unplaced);
                repaired++;
            }
        }
        return repaired;
    }

    Set<Integer> interfaces() {
        return attached.keySet();
    }

    /** Forgets every attachment (the filters themselves are removed by an uninstall). */
    void clear() {
        attached.clear();
    }

    private void attach(int ifindex, PodKey pod, Set<PodKey> unplaced) {
        try {
            hooks.attach(ifindex);
            attached.put(ifindex, pod);
        } catch (BpfException e) {
            unplaced.add(pod);
            LOG.log(System.Logger.Level.WARNING, "bpf: cannot attach to interface {0} of {1}, tried again at the next batch: {2}",
                    ifindex, pod, e.getMessage());
        }
    }
}
