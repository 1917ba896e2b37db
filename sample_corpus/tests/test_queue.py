import threading
import time

import pytest

from tidepool.errors import DrainTimeout
from tidepool.queue import Queue, drain_pending_jobs, job
from tidepool.storage import Store


@job(queue="test")
def noop(value: int) -> None:
    pass


@pytest.fixture
def store(tmp_path):
    return Store(str(tmp_path / "jobs.db"))


def test_enqueue_then_lease_then_ack(store):
    handle = Queue("test", store).enqueue(noop, value=1)
    row = store.lease(["test"], owner="w1", lease_seconds=30)
    assert row["id"] == handle.id
    assert store.ack(handle.id, "w1")
    assert handle.status(store) == "done"


def test_a_lost_lease_cannot_be_acknowledged(store):
    handle = Queue("test", store).enqueue(noop, value=1)
    store.lease(["test"], owner="w1", lease_seconds=-1)  # expires at once
    store.lease(["test"], owner="w2", lease_seconds=30)
    assert not store.ack(handle.id, "w1")
    assert store.ack(handle.id, "w2")


def test_paused_queues_are_not_leased(store):
    queue = Queue("test", store)
    queue.enqueue(noop, value=1)
    queue.pause()
    assert store.lease(["test"], "w1", 30) is None
    queue.resume()
    assert store.lease(["test"], "w1", 30) is not None


def test_drain_waits_for_leased_jobs(store):
    handle = Queue("test", store).enqueue(noop, value=1)
    store.lease(["test"], "w1", 30)
    threading.Timer(0.2, lambda: store.ack(handle.id, "w1")).start()
    assert drain_pending_jobs("test", timeout=5, store=store) == 1


def test_drain_times_out(store):
    Queue("test", store).enqueue(noop, value=1)
    store.lease(["test"], "w1", 30)
    started = time.monotonic()
    with pytest.raises(DrainTimeout):
        drain_pending_jobs("test", timeout=0.1, store=store)
    assert time.monotonic() - started < 2
