"""The producer API: declare jobs, enqueue them, and drain or pause queues."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from tidepool.config import settings
from tidepool.errors import DrainTimeout
from tidepool.storage import Store, default_store

_REGISTRY: dict[str, "JobSpec"] = {}


@dataclass(frozen=True)
class JobSpec:
    """How a decorated function is run: its queue and its retry policy."""

    path: str
    queue: str
    max_attempts: int
    backoff_base: float
    backoff_cap: float


@dataclass(frozen=True)
class JobHandle:
    """A reference to one enqueued job."""

    id: int
    queue: str

    def status(self, store: Store | None = None) -> str:
        return (store or default_store()).job_state(self.id)


def job(queue: str, max_attempts: int = 5, backoff_base: float | None = None,
        backoff_cap: float | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a function as a job on ``queue``."""

    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        path = f"{function.__module__}.{function.__qualname__}"
        _REGISTRY[path] = JobSpec(
            path=path,
            queue=queue,
            max_attempts=max_attempts,
            backoff_base=backoff_base if backoff_base is not None else settings().retry_base,
            backoff_cap=backoff_cap if backoff_cap is not None else settings().retry_cap,
        )
        return function

    return register


class Queue:
    """A named queue; cheap to create, since it is only a name."""

    def __init__(self, name: str, store: Store | None = None) -> None:
        self.name = name
        self.store = store or default_store()

    def enqueue(self, function: Callable[..., Any], /, **arguments: Any) -> JobHandle:
        path = f"{function.__module__}.{function.__qualname__}"
        spec = _REGISTRY.get(path)
        if spec is None:
            raise ValueError(f"{path} is not a job; decorate it with @job")
        job_id = self.store.enqueue(self.name, path, arguments, max_attempts=spec.max_attempts)
        return JobHandle(job_id, self.name)

    def pause(self) -> None:
        self.store.set_paused(self.name, True)

    def resume(self) -> None:
        self.store.set_paused(self.name, False)

    def depth(self) -> int:
        return self.store.count(self.name, state="ready")


def drain_pending_jobs(queue: str, timeout: float = 300.0, store: Store | None = None) -> int:
    """Stop leasing on ``queue`` and wait until its leased jobs finish; return how many were waited for.

    The queue stays paused afterwards, so a deploy can change job signatures safely;
    call ``Queue(queue).resume()`` when it is done.
    """
    store = store or default_store()
    store.set_paused(queue, True)
    waited_for = store.count(queue, state="leased")
    deadline = time.monotonic() + timeout
    while (remaining := store.count(queue, state="leased")) > 0:
        if time.monotonic() > deadline:
            raise DrainTimeout(queue, remaining)
        time.sleep(0.5)
    return waited_for
