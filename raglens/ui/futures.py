"""Waiting in a worker thread for a value the embedding process will deliver, without outliving the worker."""

from __future__ import annotations

import concurrent.futures
from typing import TypeVar

from textual.worker import get_current_worker

from raglens.errors import EmbeddingProcessGone

T = TypeVar("T")

POLL_S = 0.1
"""How often a waiting worker checks whether it was cancelled (a newer keystroke, the app closing)."""


def result_unless_cancelled(future: concurrent.futures.Future[T]) -> T | None:
    """``future``'s result once it comes; None if the current worker is cancelled first.

    None too if the embedding process ended before it answered: the app reports that, starts it
    again and asks again. Any other failure raises, as a worker error the app reports.
    """
    worker = get_current_worker()
    while True:
        try:
            return future.result(timeout=POLL_S)
        except EmbeddingProcessGone:
            return None
        except concurrent.futures.TimeoutError:
            if worker.is_cancelled:
                return None
