"""A finished thread worker is freed with its arguments: Textual leaves it in its pool thread's context
until that thread's next worker, and the app's frozen heap would then keep it for good."""

from __future__ import annotations

import gc
import weakref

from textual import work
from textual.app import App

from raglens.ui.worker_threads import isolate_worker_contexts
from tests.ui.conftest import wait_until


class Payload:
    """Stands for a large argument: an index snapshot, a corpus."""


class WorkerApp(App[None]):
    def __init__(self, isolate: bool) -> None:
        super().__init__()
        self.isolate = isolate
        self.done = 0

    def on_mount(self) -> None:
        if self.isolate:
            isolate_worker_contexts()

    @work(thread=True)
    def consume(self, payload: Payload) -> None:
        self.call_from_thread(self.finished)

    def finished(self) -> None:
        self.done += 1


async def payload_alive_after_its_worker(isolate: bool) -> bool:
    app = WorkerApp(isolate)
    async with app.run_test() as pilot:
        payload = Payload()
        alive = weakref.ref(payload)
        app.consume(payload)
        del payload
        await wait_until(pilot, lambda: app.done == 1 and not list(app.workers), "the worker done")
        await pilot.pause()
        gc.collect()
        return alive() is not None


async def test_a_finished_worker_keeps_nothing_alive() -> None:
    assert not await payload_alive_after_its_worker(isolate=True)


async def test_textuals_own_pool_keeps_the_last_worker_of_each_thread() -> None:
    """What the pool is for: if Textual stops doing this, the pool can go (this then fails)."""
    assert await payload_alive_after_its_worker(isolate=False)


def test_the_pool_counts_its_calls_until_they_return_or_raise() -> None:
    import threading

    from raglens.ui.worker_threads import ContextPerCallExecutor

    pool = ContextPerCallExecutor()
    release = threading.Event()

    def fail() -> None:
        raise ValueError("a failing worker")

    try:
        waiting = pool.submit(release.wait, 10)
        failing = pool.submit(fail)
        assert isinstance(failing.exception(timeout=10), ValueError)
        assert pool.running == 1, "the failed call is no longer counted; the waiting one is"
        release.set()
        assert waiting.result(timeout=10) is True
        assert pool.running == 0
    finally:
        release.set()
        pool.shutdown()


def test_a_call_cancelled_while_queued_is_no_longer_counted() -> None:
    """Textual cancels a superseded worker's future: one still queued never runs."""
    import threading

    from raglens.ui.worker_threads import ContextPerCallExecutor

    pool = ContextPerCallExecutor(max_workers=1)  # so the second call waits in the queue
    release = threading.Event()
    try:
        busy = pool.submit(release.wait, 10)
        queued = pool.submit(release.wait, 10)
        assert pool.running == 2
        assert queued.cancel()
        assert pool.running == 1
        release.set()
        busy.result(timeout=10)
        assert pool.running == 0
    finally:
        release.set()
        pool.shutdown()
