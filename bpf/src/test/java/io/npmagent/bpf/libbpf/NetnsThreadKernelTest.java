package io.npmagent.bpf.libbpf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.npmagent.dataplane.kernel.KernelTestSupport;
import io.npmagent.harness.node.NetworkNamespace;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A thread that enters a namespace runs its work there, and only there; failures come back whole. */
class NetnsThreadKernelTest {
    @BeforeEach
    void require() {
        KernelTestSupport.require("ip");
    }

    @Test
    void workRunsInsideTheNamespaceAndTheCallerStaysOutside() throws Exception {
        try (NetworkNamespace ns = NetworkNamespace.forTest("thr"); NetnsThread inside = NetnsThread.enter(ns.name())) {
            String target = "net:[" + Files.getAttribute(Path.of("/run/netns", ns.name()), "unix:ino") + "]";
            assertThat(inside.call(NetnsThreadKernelTest::currentNetns)).isEqualTo(target);
            assertThat(currentNetns()).isNotEqualTo(target);
            assertThat(inside.name()).isEqualTo(ns.name());
        }
    }

    @Test
    void withoutANameTheThreadStaysInTheCallersNamespace() throws Exception {
        try (NetnsThread here = NetnsThread.enter((String) null)) {
            assertThat(here.call(NetnsThreadKernelTest::currentNetns)).isEqualTo(currentNetns());
        }
    }

    @Test
    void exceptionsPropagateAsThrownAndTheThreadLivesOn() throws Exception {
        try (NetworkNamespace ns = NetworkNamespace.forTest("exc"); NetnsThread inside = NetnsThread.enter(ns.name())) {
            IOException thrown = new IOException("boom");
            assertThatThrownBy(() -> inside.call(() -> {
                throw thrown;
            })).isSameAs(thrown);
            assertThatThrownBy(() -> inside.run(() -> {
                throw new IllegalStateException("bang");
            })).isInstanceOf(IllegalStateException.class).hasMessage("bang");
            assertThatThrownBy(() -> inside.get(() -> {
                throw new AssertionError("error");
            })).isInstanceOf(AssertionError.class);
            // Still the same thread, still inside.
            String target = "net:[" + Files.getAttribute(Path.of("/run/netns", ns.name()), "unix:ino") + "]";
            assertThat(inside.call(NetnsThreadKernelTest::currentNetns)).isEqualTo(target);
        }
    }

    @Test
    void closeLetsRunningWorkFinishThenRefusesMore() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean finished = new AtomicBoolean();
        NetnsThread thread = NetnsThread.enter((String) null);
        Thread caller = new Thread(() -> thread.run(() -> {
            started.countDown();
            awaitQuietly(release);
            finished.set(true);
        }));
        caller.start();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        Thread closer = new Thread(thread::close);
        closer.start();
        release.countDown();
        closer.join();
        // close() returned only after the worker ended, so the work in flight had finished.
        assertThat(finished).isTrue();
        caller.join();
        thread.close();
        assertThatThrownBy(() -> thread.run(() -> {})).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void workSubmittedFromTheThreadItselfRunsInline() throws Exception {
        try (NetnsThread thread = NetnsThread.enter((String) null)) {
            assertThat(thread.call(() -> thread.call(() -> 42))).isEqualTo(42);
        }
    }

    @Test
    void aMissingNamespaceFailsAtEnterNamingIt() {
        assertThatThrownBy(() -> NetnsThread.enter("npmt-no-such-netns"))
                .isInstanceOfSatisfying(BpfException.class, e -> {
                    assertThat(e.operation()).isEqualTo("open");
                    assertThat(e.object()).isEqualTo("/run/netns/npmt-no-such-netns");
                    assertThat(e.errno()).isEqualTo(Errno.ENOENT);
                });
        assertThatThrownBy(() -> NetnsThread.enter("../etc")).isInstanceOf(IllegalArgumentException.class);
        // A file that is no namespace: setns refuses it.
        assertThatThrownBy(() -> NetnsThread.enter(Path.of("/proc/self/status")))
                .isInstanceOfSatisfying(BpfException.class, e -> {
                    assertThat(e.operation()).isEqualTo("setns");
                    assertThat(e.errno()).isEqualTo(Errno.EINVAL);
                });
    }

    /** The calling thread's network namespace, as the kernel names it. */
    private static String currentNetns() throws IOException {
        return Files.readSymbolicLink(Path.of("/proc/thread-self/ns/net")).toString();
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
