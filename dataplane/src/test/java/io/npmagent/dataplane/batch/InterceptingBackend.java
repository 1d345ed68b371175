package io.npmagent.dataplane.batch;

import io.npmagent.dataplane.backend.Backend;
import io.npmagent.dataplane.backend.BackendStatus;
import io.npmagent.dataplane.backend.Batch;
import io.npmagent.dataplane.backend.FakeBackend;
import java.util.function.Consumer;

/** A {@link FakeBackend} with a hook that runs inside each apply, before the batch lands (or throws instead). */
final class InterceptingBackend implements Backend {
    private final FakeBackend inner;
    private final Consumer<Batch> beforeApply;

    InterceptingBackend(FakeBackend inner, Consumer<Batch> beforeApply) {
        this.inner = inner;
        this.beforeApply = beforeApply;
    }

    @Override
    public String name() {
        return "intercepting";
    }

    @Override
    public void apply(Batch batch) {
        beforeApply.accept(batch);
        inner.apply(batch);
    }

    @Override
    public int reconcile() {
        return inner.reconcile();
    }

    @Override
    public int quickReconcile() {
        return inner.quickReconcile();
    }

    @Override
    public void uninstall() {}

    @Override
    public BackendStatus status() {
        return inner.status();
    }
}
