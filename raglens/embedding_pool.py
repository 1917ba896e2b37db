"""sentence-transformers' own multi-process pool, for one model on several devices.

``--device cuda:0,cuda:1`` (or ``cpu,cpu`` on a many-core machine) embeds windows in one process per
device, through the model's ``start_multi_process_pool`` and ``encode(pool=...)``. raglens adds one
thing: each worker dies with the process that started it, SIGKILL included (the library's workers
are daemons, which a normal exit stops but a killed parent leaves waiting on their queue forever).
sentence-transformers is imported only when a pool is asked for (``pooled_model_class``); the
class is also this module's attribute, where a spawned worker finds it when it unpickles the model.
"""

from __future__ import annotations

import functools
import math
import os
import signal
import sys
from multiprocessing.queues import Queue
from typing import Any, Literal

from raglens.embedding import threads_per_cpu_worker
from raglens.errors import ModelLoadError
from raglens.parent_death import die_with_parent

Pool = dict[Literal["input", "output", "processes"], Any]
"""The library's pool: its input and output queues and its worker processes."""

POOL_ATTRIBUTE_PARENT = "_raglens_pool_parent"
POOL_ATTRIBUTE_THREADS = "_raglens_pool_threads"


@functools.cache
def pooled_model_class() -> Any:
    """``PooledSentenceTransformer``: a SentenceTransformer whose pool workers die with the process
    that started them (made on first use, as it imports sentence-transformers)."""
    from sentence_transformers import SentenceTransformer

    class PooledSentenceTransformer(SentenceTransformer):
        """A SentenceTransformer whose pool workers die with the process that started them."""

        @classmethod
        def _multi_process_worker(
            cls, target_device: str, model: Any, input_queue: Queue[Any], results_queue: Queue[Any]
        ) -> None:
            die_with_parent()
            if os.getppid() != getattr(model, POOL_ATTRIBUTE_PARENT, os.getppid()):
                os._exit(1)  # the parent died before the request above: no chunk will ever come
            # The pool is stopped with SIGTERM: exit through the interpreter's own exit then, so
            # multiprocessing's finalizers release what the worker registered (tqdm's lock, a named
            # semaphore), which the resource tracker would otherwise report as leaked on the terminal.
            signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
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
    """The library's pool of ``model`` on ``devices``, its workers tied to this process's life.

    Refused where this sentence-transformers has no ``_multi_process_worker`` for the model's class
    to override (releases before 6 start their workers from a function of their own): raglens could
    not end those workers with itself.
    """
    from sentence_transformers import SentenceTransformer

    if not hasattr(SentenceTransformer, "_multi_process_worker"):
        raise ModelLoadError(
            "this sentence-transformers starts its pool's workers in a way raglens cannot end with "
            "itself; use one device, or sentence-transformers 6 or later"
        )
    setattr(model, POOL_ATTRIBUTE_PARENT, os.getpid())
    setattr(model, POOL_ATTRIBUTE_THREADS, threads_per_cpu_worker(devices, os.cpu_count()))
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


def stop_pool(model: Any, pool: Pool) -> None:
    """Stop the pool's workers and wait for them."""
    model.stop_multi_process_pool(pool)
