"""The consumer loop: lease a job, run it, acknowledge or fail it, repeat."""

from __future__ import annotations

import importlib
import json
import logging
import random
import signal
import socket
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

from tidepool import metrics
from tidepool.config import settings
from tidepool.queue import _REGISTRY
from tidepool.retry import compute_backoff_delay, should_retry
from tidepool.storage import Store, default_store

log = logging.getLogger("tidepool.worker")


class Worker:
    """Runs jobs from one or more queues until asked to stop."""

    def __init__(self, queues: list[str], concurrency: int = 1, store: Store | None = None) -> None:
        self.queues = queues
        self.concurrency = concurrency
        self.store = store or default_store()
        self.owner = f"{socket.gethostname()}:{threading.get_native_id()}:{random.randrange(1 << 30)}"
        self._stopping = threading.Event()
        self._signals = 0

    def install_signal_handlers(self) -> None:
        def handle(signum: int, frame: object) -> None:
            self._signals += 1
            if self._signals == 1:
                log.info("finishing running jobs, then stopping (signal again to stop now)")
                self._stopping.set()
            else:
                raise SystemExit(1)

        signal.signal(signal.SIGTERM, handle)
        signal.signal(signal.SIGINT, handle)

    def run(self) -> None:
        lease_seconds = settings().lease_seconds
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            while not self._stopping.is_set():
                row = self.store.lease(self.queues, self.owner, lease_seconds)
                if row is None:
                    # Jitter keeps a fleet of idle workers from polling in lockstep.
                    time.sleep(settings().poll_interval * random.uniform(0.8, 1.2))
                    continue
                pool.submit(self._run_one, row, lease_seconds)

    def _run_one(self, row, lease_seconds: float) -> None:
        job_id = row["id"]
        beat = threading.Event()
        heartbeat = threading.Thread(target=self._heartbeat, args=(job_id, lease_seconds, beat), daemon=True)
        heartbeat.start()
        started = time.monotonic()
        try:
            module_name, _, function_name = row["path"].rpartition(".")
            function = getattr(importlib.import_module(module_name), function_name)
            function(**json.loads(row["arguments"]))
        except Exception as error:  # a job's failure is data, not a crash of the worker
            self._fail(row, error)
        else:
            if not self.store.ack(job_id, self.owner):
                log.warning("job %s finished after its lease was lost; not acknowledging", job_id)
            metrics.observe_duration(row["queue"], time.monotonic() - started)
            metrics.count_outcome(row["queue"], "succeeded")
        finally:
            beat.set()

    def _heartbeat(self, job_id: int, lease_seconds: float, done: threading.Event) -> None:
        while not done.wait(lease_seconds / 3):
            if not self.store.heartbeat(job_id, self.owner, lease_seconds):
                log.warning("lost the lease of job %s", job_id)
                return

    def _fail(self, row, error: Exception) -> None:
        spec = _REGISTRY.get(row["path"])
        max_attempts = spec.max_attempts if spec else row["max_attempts"]
        message = "".join(traceback.format_exception_only(type(error), error)).strip()
        if should_retry(error, row["attempt"], max_attempts):
            delay = compute_backoff_delay(row["attempt"],
                                          spec.backoff_base if spec else 2.0,
                                          spec.backoff_cap if spec else 600.0)
            self.store.fail(row["id"], self.owner, message, retry_at=time.time() + delay)
            metrics.count_outcome(row["queue"], "retried")
        else:
            self.store.fail(row["id"], self.owner, message, retry_at=None)
            metrics.count_outcome(row["queue"], "dead")
