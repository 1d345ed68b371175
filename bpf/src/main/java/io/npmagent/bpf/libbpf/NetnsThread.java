package io.npmagent.bpf.libbpf;

import java.nio.file.Path;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Supplier;

/**
 * One thread that lives in a network namespace, running the work given to it: the tc calls (and test
 * runs) of a backend enforcing inside a sandbox's node namespace.
 *
 * <p>Linux keeps the network namespace per thread: setns(2) moves only the calling thread, and a
 * netlink socket belongs to the namespace of the thread that opened it. So the thread enters the
 * namespace once, first thing, and then only ever runs work submitted here. It is a dedicated thread
 * rather than an executor's: a pool replaces a worker that dies with a fresh one, which would run the
 * next task in the agent's own namespace, on the wrong interfaces.
 *
 * <p>Work runs in submission order. Exceptions thrown by the work propagate to the caller as they were
 * thrown. Closing runs what is queued, then ends the thread (and with it its place in the namespace).
 */
public final class NetnsThread implements AutoCloseable {
    private static final Runnable STOP = () -> {};

    private final String name;
    private final BlockingQueue<Runnable> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean closed;

    private NetnsThread(String name, Path nsFile) {
        this.name = name;
        CompletableFuture<Void> entered = new CompletableFuture<>();
        this.thread = new Thread(() -> loop(nsFile, entered), "netns-" + name);
        thread.setDaemon(true);
        thread.start();
        try {
            entered.join();
        } catch (RuntimeException e) {
            closed = true;
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw cause instanceof RuntimeException ? (RuntimeException) cause : e;
        }
    }

    /** A thread in the namespace {@code ip netns add NAME} made (/run/netns/NAME); null stays in the current one. */
    public static NetnsThread enter(String netnsName) {
        if (netnsName == null) {
            return new NetnsThread("current", null);
        }
        if (netnsName.isEmpty() || netnsName.contains("/")) {
            throw new IllegalArgumentException("not a network namespace name: '" + netnsName + "'");
        }
        return new NetnsThread(netnsName, Path.of("/run/netns", netnsName));
    }

    /** A thread in the namespace of a file such as /proc/PID/ns/net or a CNI's netns path. */
    public static NetnsThread enter(Path nsFile) {
        return new NetnsThread(nsFile.toString(), nsFile);
    }

    /** The namespace's name (or path); "current" for the caller's namespace. */
    public String name() {
        return name;
    }

    private void loop(Path nsFile, CompletableFuture<Void> entered) {
        try {
            if (nsFile != null) {
                setns(nsFile);
            }
        } catch (RuntimeException e) {
            entered.completeExceptionally(e);
            return;
        }
        entered.complete(null);
        while (true) {
            Runnable work;
            try {
                work = queue.take();
            } catch (InterruptedException e) {
                // Only close() may end the thread: an interrupt from elsewhere must not strand queued work.
                continue;
            }
            if (work == STOP) {
                return;
            }
            work.run(); // a FutureTask: it keeps whatever the work throws for the caller
        }
    }

    private static void setns(Path nsFile) {
        int fd = LibC.lib().open(nsFile.toString(), LibC.O_RDONLY | LibC.O_CLOEXEC);
        if (fd < 0) {
            throw LibBpfNative.error("open", nsFile.toString(), LibC.errno());
        }
        try {
            if (LibC.lib().setns(fd, LibC.CLONE_NEWNET) != 0) {
                throw LibBpfNative.error("setns", nsFile.toString(), LibC.errno());
            }
        } finally {
            LibC.lib().close(fd);
        }
    }

    /** Runs {@code work} in the namespace and returns its result; whatever it throws is thrown here. */
    public <T> T call(Callable<T> work) throws Exception {
        if (Thread.currentThread() == thread) {
            return work.call(); // submitting from inside would wait for itself forever
        }
        FutureTask<T> task = new FutureTask<>(work);
        submit(task);
        try {
            return task.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw (Exception) cause;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            CancellationException c = new CancellationException("interrupted while waiting for work in netns " + name);
            c.initCause(e);
            throw c;
        }
    }

    /** {@link #call} for work that throws only unchecked exceptions. */
    public <T> T get(Supplier<T> work) {
        try {
            return call(work::get);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("a Supplier threw a checked exception", e); // cannot happen
        }
    }

    public void run(Runnable work) {
        get(() -> {
            work.run();
            return null;
        });
    }

    /** Synchronized with close(), so no work is queued behind STOP, where it would wait forever. */
    private synchronized void submit(Runnable task) {
        if (closed) {
            throw new IllegalStateException("netns thread " + name + " is closed");
        }
        queue.add(task);
    }

    /** Runs the queued work, then ends the thread. Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            queue.add(STOP);
        }
        if (Thread.currentThread() == thread) {
            return;
        }
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "NetnsThread[" + name + "]";
    }
}
