"""sentence-transformers' own multi-process pool, for one model on several devices.

``--device cuda:0,cuda:1`` (or ``cpu,cpu`` on a many-core machine) embeds windows in one process per
device, through the model's ``start_multi_process_pool`` and ``encode(pool=...)``. raglens adds one
thing: each worker dies with the process that started it, SIGKILL included (the library's workers
are daemons, which a normal exit stops but a killed parent leaves waiting on their queue forever).
sentence-transformers is imported only when a pool is asked for (``pooled_model_class``); the
class is also this module's attribute, where a spawned worker finds it when it unpickles the model.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import signal
import threading
from collections.abc import Callable
from multiprocessing.queues import Queue
from typing import Any, Literal

from raglens.devices import threads_per_cpu_worker, usable_cores
from raglens.errors import ModelLoadError
from raglens.parent_death import die_with

Pool = dict[Literal["input", "output", "processes"], Any]
"""The library's pool: its input and output queues and its worker processes."""

POOL_ATTRIBUTE_PARENT = "_raglens_pool_parent"
POOL_ATTRIBUTE_THREADS = "_raglens_pool_threads"


@functools.cache
def pooled_model_class() -> Any:
    """``PooledSentenceTransformer``: a SentenceTransformer whose pool workers die with the process
    that started them (made on first use, as it imports sentence-transformers)."""
    from sentence_transformers import SentenceTransformer

    if not hasattr(SentenceTransformer, "_multi_process_worker"):
        raise ModelLoadError(
            "this sentence-transformers starts its pool's workers in a way raglens cannot end with "
            "itself; use one device, or sentence-transformers 6 or later"
        )

    class PooledSentenceTransformer(SentenceTransformer):
        """A SentenceTransformer whose pool workers die with the process that started them."""

        @classmethod
        def _multi_process_worker(
            cls, target_device: str, model: Any, input_queue: Queue[Any], results_queue: Queue[Any]
        ) -> None:
            die_with(getattr(model, POOL_ATTRIBUTE_PARENT))

            # The pool is stopped with SIGTERM: then multiprocessing's own exit runs, whose finalizers
            # release what the worker registered (tqdm's lock, a named semaphore) that the resource
            # tracker would otherwise report as leaked on the terminal, and the process ends. Not the
            # interpreter's whole exit: in CI it once ran past STOP_WAIT_S (31.8 s), and the worker
            # killed then left its semaphore "leaked". Nobody reads results once the pool is stopped,
            # so the exit does not wait to send any left in the queue's buffer.
            def exit_when_told(number: int, frame: object) -> None:
                from multiprocessing import util

                results_queue.cancel_join_thread()
                util._exit_function()  # type: ignore[attr-defined]
                os._exit(0)

            signal.signal(signal.SIGTERM, exit_when_told)
            if target_device.split(":")[0] == "cpu":
                import torch

                torch.set_num_threads(getattr(model, POOL_ATTRIBUTE_THREADS, 1))
            super()._multi_process_worker(target_device, model, input_queue, results_queue)

    PooledSentenceTransformer.__qualname__ = "PooledSentenceTransformer"  # found by name when unpickled
    return PooledSentenceTransformer


def __getattr__(name: str) -> Any:
    """``PooledSentenceTransformer``, made on first use (a spawned worker looks it up by name)."""
    if name == "PooledSentenceTransformer":
        return pooled_model_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def start_pool(model: Any, devices: list[str]) -> Pool:
    """The library's pool of ``model`` (a ``PooledSentenceTransformer``) on ``devices``, its workers
    tied to this process's life.

    Started from the thread that embeds: Linux sends the parent-death signal when the *thread* that
    started a worker ends, so that thread must live as long as the pool (the main thread does).
    """
    if threading.current_thread() is not threading.main_thread():
        raise ModelLoadError("a pool of embedding processes is started from the main thread only")
    setattr(model, POOL_ATTRIBUTE_PARENT, os.getpid())
    setattr(model, POOL_ATTRIBUTE_THREADS, threads_per_cpu_worker(devices, usable_cores()))
    pool: Pool = model.start_multi_process_pool(devices)
    return pool


def encode_in_pool(model: Any, pool: Pool, texts: list[str], batch_size: int) -> Any:
    """``texts`` embedded by the pool's workers, one chunk each, as a tensor in the texts' order."""
    chunk = max(1, math.ceil(len(texts) / len(pool["processes"])))
    return model.encode(
        texts,
        batch_size=batch_size,
        convert_to_tensor=True,
        normalize_embeddings=False,
        show_progress_bar=False,
        pool=pool,
        chunk_size=chunk,
    )


STOP_WAIT_S = 30.0
"""How long a worker told to stop has to exit through its interpreter before it is killed."""


def stop_pool(pool: Pool, tell: Callable[[int], None] | None = None) -> None:
    """Stop the pool's workers and wait for them: the library's ``stop_multi_process_pool``, but each
    worker's SIGTERM goes to its main thread, and one that has not exited within ``STOP_WAIT_S`` is
    killed, so no stop waits forever.

    A process-wide SIGTERM may be taken by one of torch's threads: Python then runs its handler only
    when the main thread next runs bytecode, and that thread sleeps in a read of the input queue for
    good (seen once in a CI run: the process that stopped the pool waited on it forever).
    """
    tell = tell if tell is not None else _tell_main_thread
    processes = pool["processes"]
    for process in processes:
        tell(process.pid)
    for process in processes:
        process.join(STOP_WAIT_S)
        if process.is_alive():
            process.kill()
            process.join()
        process.close()
    pool["input"].cancel_join_thread()
    pool["input"].close()
    pool["output"].close()


def _tell_main_thread(pid: int) -> None:
    """SIGTERM to the main thread of process ``pid`` (Linux's ``tgkill``; elsewhere, to the process)."""
    import ctypes

    try:
        tgkill = ctypes.CDLL(None, use_errno=True).tgkill
    except (AttributeError, OSError, TypeError):  # no tgkill in this C library, or no C library to load
        tgkill = None
    if tgkill is None or tgkill(pid, pid, signal.SIGTERM) != 0:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
