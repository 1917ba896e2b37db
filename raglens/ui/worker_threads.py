"""The thread pool the explorer's thread workers run on, each call in a context of its own.

Textual runs a thread worker through the event loop's default executor, and marks it the thread's
active worker in that pool thread's own context, where it stays until the thread runs the next one.
So a finished worker stayed alive with its arguments (an index's vectors, a corpus), and once the
heap was frozen (raglens.ui.screens.main) it stayed for good: 280 MB a re-scan at 100k windows. Each
call here runs in a copy of the submitting thread's context, as ``asyncio.to_thread`` runs its own,
and the copy goes with the call.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class ContextPerCallExecutor(ThreadPoolExecutor):
    """A thread pool whose every call runs in a copy of its submitter's context variables, and which
    counts its calls still running (a cancelled Textual worker is finished while its thread runs on)."""

    def __init__(self, max_workers: int | None = None, thread_name_prefix: str = "") -> None:
        super().__init__(max_workers, thread_name_prefix=thread_name_prefix)
        self._count_lock = threading.Lock()
        self._running = 0

    @property
    def running(self) -> int:
        """How many calls are submitted and not yet returned."""
        return self._running

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        context = contextvars.copy_context()
        with self._count_lock:
            self._running += 1
        try:
            run: Callable[..., T] = context.run
            future: Future[T] = super().submit(run, fn, *args, **kwargs)
        except BaseException:
            self._call_ended()
            raise
        # Once the call returns, raises, or is cancelled while still queued (then it never runs).
        future.add_done_callback(lambda _: self._call_ended())
        return future

    def _call_ended(self) -> None:
        with self._count_lock:
            self._running -= 1


def isolate_worker_contexts(loop: asyncio.AbstractEventLoop | None = None) -> ContextPerCallExecutor:
    """Make ``loop``'s default executor (the running loop's by default) a ContextPerCallExecutor."""
    target = loop or asyncio.get_running_loop()
    executor = ContextPerCallExecutor(thread_name_prefix="raglens-worker")
    target.set_default_executor(executor)
    return executor
