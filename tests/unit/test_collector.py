"""Overlapping pauses of the garbage collector, from several threads, end with it as it was."""

from __future__ import annotations

import gc
import threading

from raglens.ui.collector import collector_paused


def test_overlapping_pauses_on_two_threads_leave_the_collector_on() -> None:
    assert gc.isenabled()
    inside, leave = threading.Event(), threading.Event()

    def worker() -> None:
        with collector_paused():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=worker)
    with collector_paused():
        thread.start()
        assert inside.wait(10)
        assert not gc.isenabled()
    assert not gc.isenabled(), "the worker's pause is still open"
    leave.set()
    thread.join(10)
    assert gc.isenabled()


def test_many_threads_pausing_at_once_end_with_the_collector_on() -> None:
    start = threading.Barrier(8)

    def pause_often() -> None:
        start.wait(10)
        for _ in range(2_000):
            with collector_paused():
                pass

    threads = [threading.Thread(target=pause_often) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
