package io.npmagent.bpf.libbpf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.bpf.testing.Links;
import io.npmagent.bpf.testing.BpfFs;
import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.harness.node.NetworkNamespace;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Our filter on a veth in a fresh namespace, driven from a {@link NetnsThread} as a backend enforcing
 * in a sandbox's node namespace does; {@code tc filter show} is the kernel's independent account.
 */
class TcKernelTest {
    @RegisterExtension
    final BpfFs fs = new BpfFs();
    NetworkNamespace ns;
    NetnsThread inside;
    int ifindex;

    @BeforeEach
    void setUp() {
        KernelTestSupport.require("mount", "ip", "tc");
        ns = NetworkNamespace.forTest("tc");
        inside = NetnsThread.enter(ns.name());
        ifindex = Links.veth(ns, "v0", "v1");
    }

    @AfterEach
    void tearDown() {
        inside.close();
        ns.close();
    }

    @Test
    void attachReplaceAndDetachOurFilter() {
        try (BpfObject object = TcPod.load(fs.root());
                BpfProgram fromPod = object.program(TcPod.FROM_POD);
                BpfProgram toPod = object.program(TcPod.TO_POD)) {
            // Nothing yet, not even a clsact qdisc.
            assertThat(inside.get(() -> Tc.attachedProgramId(ifindex, Tc.Hook.INGRESS))).isZero();
            assertThat(inside.get(() -> Tc.detach(ifindex, Tc.Hook.INGRESS))).isFalse();

            inside.run(() -> Tc.attach(ifindex, Tc.Hook.INGRESS, fromPod));
            assertThat(inside.get(() -> Tc.attachedProgramId(ifindex, Tc.Hook.INGRESS))).isEqualTo(fromPod.id());
            assertThat(filters("ingress")).hasSize(1).allMatch(l -> l.contains("handle 0x6e706d") && l.contains("npm_from_pod"));
            // The qdisc exists now, but egress has none of ours.
            assertThat(inside.get(() -> Tc.attachedProgramId(ifindex, Tc.Hook.EGRESS))).isZero();
            assertThat(inside.get(() -> Tc.detach(ifindex, Tc.Hook.EGRESS))).isFalse();

            // Replaced in place: still exactly one filter, now running the other program.
            inside.run(() -> Tc.attach(ifindex, Tc.Hook.INGRESS, toPod));
            assertThat(inside.get(() -> Tc.attachedProgramId(ifindex, Tc.Hook.INGRESS))).isEqualTo(toPod.id());
            assertThat(filters("ingress")).hasSize(1).allMatch(l -> l.contains("npm_to_pod"));

            inside.run(() -> Tc.attach(ifindex, Tc.Hook.EGRESS, fromPod));
            assertThat(inside.get(() -> Tc.attachedProgramId(ifindex, Tc.Hook.EGRESS))).isEqualTo(fromPod.id());

            assertThat(inside.get(() -> Tc.detach(ifindex, Tc.Hook.INGRESS))).isTrue();
            assertThat(inside.get(() -> Tc.attachedProgramId(ifindex, Tc.Hook.INGRESS))).isZero();
            assertThat(filters("ingress")).isEmpty();
            assertThat(inside.get(() -> Tc.detach(ifindex, Tc.Hook.INGRESS))).isFalse();
            assertThat(filters("egress")).hasSize(1);
        }
    }

    @Test
    void anAttachedProgramOutlivesItsObjectAndHandles() {
        int id;
        try (BpfObject object = TcPod.load(fs.root()); BpfProgram fromPod = object.program(TcPod.FROM_POD)) {
            inside.run(() -> Tc.attach(ifindex, Tc.Hook.INGRESS, fromPod));
            id = fromPod.id();
        }
        // As after the agent exits: the filter holds the program, which holds the pinned maps' state.
        assertThat(inside.get(() -> Tc.attachedProgramId(ifindex, Tc.Hook.INGRESS))).isEqualTo(id);
        assertThat(filters("ingress")).hasSize(1).allMatch(l -> l.contains("id " + id));

        // A restarted agent swaps its new program in over the old one.
        try (BpfObject again = TcPod.load(fs.root()); BpfProgram fromPod = again.program(TcPod.FROM_POD)) {
            assertThat(fromPod.id()).isNotEqualTo(id);
            inside.run(() -> Tc.attach(ifindex, Tc.Hook.INGRESS, fromPod));
            assertThat(inside.get(() -> Tc.attachedProgramId(ifindex, Tc.Hook.INGRESS))).isEqualTo(fromPod.id());
            assertThat(filters("ingress")).hasSize(1);
        }
    }

    @Test
    void anotherToolsFilterIsNeverTouched() {
        ns.must("tc", "qdisc", "add", "dev", "v0", "clsact");
        // A classic-BPF filter ("return 0"): it needs no classifier or action module beyond cls_bpf, which tc_pod needs anyway.
        ns.must("tc", "filter", "add", "dev", "v0", "ingress", "pref", "5", "handle", "1", "protocol", "all",
                "bpf", "bytecode", "1,6 0 0 0,", "classid", "ffff:1");
        try (BpfObject object = TcPod.load(fs.root()); BpfProgram fromPod = object.program(TcPod.FROM_POD)) {
            inside.run(() -> Tc.attach(ifindex, Tc.Hook.INGRESS, fromPod));
            assertThat(inside.get(() -> Tc.detach(ifindex, Tc.Hook.INGRESS))).isTrue();
        }
        assertThat(filters("ingress")).hasSize(1).allMatch(l -> l.contains("pref 5") && l.contains("bytecode"));
    }

    @Test
    void errorsNameTheInterfaceAndHook() {
        try (BpfObject object = TcPod.load(fs.root()); BpfProgram fromPod = object.program(TcPod.FROM_POD)) {
            int missing = ifindex + 100;
            assertThatThrownBy(() -> inside.run(() -> Tc.attach(missing, Tc.Hook.EGRESS, fromPod)))
                    .isInstanceOfSatisfying(BpfException.class, e -> {
                        assertThat(e.operation()).isEqualTo("bpf_tc_hook_create");
                        assertThat(e.object()).isEqualTo("ifindex " + missing + " egress");
                        assertThat(e.errno()).isEqualTo(Errno.ENODEV);
                    });
            // Never "nothing attached" for an interface that is not there: that is usually the wrong namespace.
            assertThatThrownBy(() -> inside.get(() -> Tc.attachedProgramId(missing, Tc.Hook.INGRESS)))
                    .isInstanceOfSatisfying(BpfException.class, e -> assertThat(e.errno()).isEqualTo(Errno.ENODEV));
            assertThatThrownBy(() -> inside.get(() -> Tc.detach(missing, Tc.Hook.INGRESS)))
                    .isInstanceOfSatisfying(BpfException.class, e -> assertThat(e.errno()).isEqualTo(Errno.ENODEV));
            assertThatThrownBy(() -> Tc.attach(0, Tc.Hook.INGRESS, fromPod)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    /**
     * Another tool holding our priority with a different classifier: the kernel refuses our filter, and
     * the refusal carries the kernel's own words, not just EINVAL.
     */
    @Test
    void aRefusalCarriesTheKernelsWords() {
        ns.must("tc", "qdisc", "add", "dev", "v0", "clsact");
        ns.must("tc", "filter", "add", "dev", "v0", "ingress", "pref", String.valueOf(Tc.PRIORITY), "protocol", "all",
                "u32", "match", "u32", "0", "0", "classid", "ffff:1");
        try (BpfObject object = TcPod.load(fs.root()); BpfProgram fromPod = object.program(TcPod.FROM_POD)) {
            assertThatThrownBy(() -> inside.run(() -> Tc.attach(ifindex, Tc.Hook.INGRESS, fromPod)))
                    .isInstanceOfSatisfying(BpfException.class, e -> {
                        assertThat(e.operation()).isEqualTo("bpf_tc_attach");
                        assertThat(e.errno()).isEqualTo(Errno.EINVAL);
                        assertThat(e.getMessage()).contains("npm_from_pod on ifindex " + ifindex + " ingress").contains("kernel: ");
                    });
            // And the same thread's next, unrelated failure does not inherit those words.
            assertThatThrownBy(() -> inside.run(() -> Tc.attach(ifindex + 100, Tc.Hook.INGRESS, fromPod)))
                    .isInstanceOfSatisfying(BpfException.class, e -> assertThat(e.getMessage()).doesNotContain("kernel: "));
        }
    }

    /** Our filters' lines of {@code tc filter show}: those with a handle (tc prints a bare header line per priority too). */
    private List<String> filters(String hook) {
        return ns.must("tc", "filter", "show", "dev", "v0", hook).stdout().lines().filter(l -> l.contains("handle")).toList();
    }
}
