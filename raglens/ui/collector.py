"""Pausing Python's automatic garbage collection around work that allocates in bulk, from any thread.

Reading a 100k-window corpus on a worker, or listing a 12k-line tree on the event loop, allocates
enough to set off full collections of the heap, each holding every thread from the GIL for 0.1-0.2 s.
Pauses may overlap across threads: the collector is paused while any is open, and is as it was before
the first once the last ends.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator


class _Pauses:
    """How many pauses are open, and whether the collector ran before the first of them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open = 0
        self.was_enabled = False


_PAUSES = _Pauses()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic collection while this and any other open pause last; explicit ones still run."""
    with _PAUSES.lock:
        if _PAUSES.open == 0:
            _PAUSES.was_enabled = gc.isenabled()
            gc.disable()
        _PAUSES.open += 1
    try:
        yield
    finally:
        with _PAUSES.lock:
            _PAUSES.open -= 1
            if _PAUSES.open == 0 and _PAUSES.was_enabled:
                gc.enable()
