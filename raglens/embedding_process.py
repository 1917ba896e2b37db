"""The app's handle on the embedding process: typed requests in, typed events out, queries as futures.

Importing torch and tokenising hold the GIL for up to half a second at a time, so a UI must not host
the model in a thread; it runs in ``raglens.embedding_server``, a process of its own, started at once
(before the app's first frame) and fed over a socket pair. Requests go out through a sender thread, so
no caller ever waits on the pipe while the process is busy with a batch. This module needs neither
numpy nor the model to import.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from raglens.embedding_events import (
    CacheTrouble,
    EmbedFirst,
    EmbedQuery,
    EngineNote,
    EngineTrouble,
    ExplainScore,
    ModelChoice,
    ModelFailed,
    ModelReady,
    ProcessEnded,
    ProcessEvent,
    QueryEmbedded,
    Request,
    ScoreExplained,
    ServerConfig,
    Shutdown,
    index_windows_requests,
)
from raglens.errors import EmbeddingProcessGone, ModelLoadError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    import numpy as np

    from raglens.attribution import Attribution

PROCESS_BATCH_SIZE = 8
"""Windows per batch in the process: small enough that a query waits at most ~0.4 s on a 2-core CPU."""


class EmbeddingProcess:
    """The embedding process: ask from any thread; read its events from one thread (the relay)."""

    def __init__(
        self,
        choice: ModelChoice | None = None,
        *,
        cache_dir: str | None = None,
        log_path: str | None = None,
        batch_size: int = PROCESS_BATCH_SIZE,
    ) -> None:
        """Start the process; it opens the model's engine in the background.

        ``cache_dir`` is the vector cache the process reads and writes (None: no cache); the process's
        own output goes to ``log_path`` (None: nowhere), never over a UI.
        """
        ours, theirs = socket.socketpair()
        environment = dict(os.environ)
        # The process finds raglens (and, in tests, their fakes) where this one does.
        environment["PYTHONPATH"] = os.pathsep.join(path for path in sys.path if path)
        with open(log_path or os.devnull, "ab") as log:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "raglens.embedding_server", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment,
            )
        theirs.close()
        self._connection = Connection(ours.detach())
        self._outbox: queue.SimpleQueue[Request | None] = queue.SimpleQueue()
        self._sender = threading.Thread(target=self._send_all, name="raglens-embedder-send", daemon=True)
        self._sender.start()
        self._request_ids = itertools.count(1)
        self._waiting: dict[int, Future[Any]] = {}
        """Queries and explanations asked and not yet answered, by id; guarded by ``_waiting_lock``."""
        self._waiting_lock = threading.Lock()
        self._ended = False
        self._outbox.put(ServerConfig(choice or ModelChoice(), cache_dir, batch_size))

    def _send_all(self) -> None:
        """The sender thread: pickle and send each request in order, until the sentinel or a dead pipe."""
        while (request := self._outbox.get()) is not None:
            try:
                self._connection.send(request)
            except OSError:
                return  # the process is gone; the relay reports it

    def embed_query(self, text: str) -> Future[np.ndarray]:
        """The vector of ``text``, as a future the relay resolves (or fails, if the process ends)."""
        future: Future[np.ndarray] = Future()
        self._ask(future, lambda request_id: EmbedQuery(request_id, text))
        return future

    def explain(self, question: str, window_text: str, generation: int, row: int) -> Future[Attribution]:
        """The token shares of the score of ``window_text`` (row ``row`` of window set ``generation``)
        for ``question``, as a future the relay resolves."""
        future: Future[Attribution] = Future()
        self._ask(future, lambda request_id: ExplainScore(request_id, question, window_text, generation, row))
        return future

    def _ask(self, future: Future[Any], request: Callable[[int], Request]) -> None:
        """Send ``request`` for a new id, whose answer resolves ``future``; fail it if the process ended."""
        with self._waiting_lock:
            if self._ended:
                future.set_exception(EmbeddingProcessGone("the embedding process has ended"))
                return
            request_id = next(self._request_ids)
            self._waiting[request_id] = future
        self._outbox.put(request(request_id))

    def index_windows(self, generation: int, texts: Sequence[str], first: Sequence[int] = ()) -> None:
        """Give vectors to a new window set (cache first, then the model; rows ``first`` ahead)."""
        for request in index_windows_requests(generation, texts, first):
            self._outbox.put(request)

    def embed_first(self, generation: int, rows: Sequence[int]) -> None:
        """Embed ``rows`` of window set ``generation`` next; only their ids travel."""
        self._outbox.put(EmbedFirst(generation, tuple(rows)))

    def next_event(self, timeout: float | None = None) -> ProcessEvent | None:
        """The next event, or None when none came within ``timeout`` seconds. Call from one thread only.

        A query's vector and an explanation resolve their futures here and are not returned.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._ended:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                if not self._connection.poll(left):
                    return None
                event: ProcessEvent = self._connection.recv()
            except (EOFError, OSError):
                return self._end()
            match event:
                case QueryEmbedded():
                    self._answer(event.query_id, event.vector)
                case ScoreExplained():
                    self._answer(event.request_id, event.attribution)
                case _:
                    return event
        return ProcessEnded(self._process.returncode)

    def _answer(self, request_id: int, answer: object) -> None:
        """Resolve the future of request ``request_id`` with ``answer``, unless it was cancelled."""
        with self._waiting_lock:
            future = self._waiting.pop(request_id, None)
        if future is not None and future.set_running_or_notify_cancel():
            future.set_result(answer)

    def events(self, cancelled: Callable[[], bool], poll_s: float = 0.1) -> Iterator[ProcessEvent]:
        """Every event until the process ends (its ProcessEnded comes last) or ``cancelled()`` holds."""
        while not cancelled():
            event = self.next_event(timeout=poll_s)
            if event is not None:
                yield event
                if isinstance(event, ProcessEnded):
                    return

    def _end(self) -> ProcessEnded:
        """The pipe closed: the process is gone; every unanswered query and explanation fails."""
        with self._waiting_lock:
            self._ended = True
            waiting, self._waiting = list(self._waiting.values()), {}
        for future in waiting:
            if future.set_running_or_notify_cancel():
                future.set_exception(EmbeddingProcessGone("the embedding process ended before it answered"))
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=5)
        return ProcessEnded(self._process.returncode)

    def wait_until_ready(
        self, timeout: float | None = None, troubles: list[CacheTrouble | EngineTrouble] | None = None
    ) -> ModelReady:
        """Block until the engine is open; raise :class:`ModelLoadError` if it cannot be.

        What went wrong on the way, and did not stop it (the cache, an export that failed its check),
        is added to ``troubles``; what the engine said it was doing is passed over.
        """
        event = self.next_event(timeout)
        while isinstance(event, CacheTrouble | EngineTrouble | EngineNote):
            if troubles is not None and not isinstance(event, EngineNote):
                troubles.append(event)
            event = self.next_event(timeout)
        if isinstance(event, ModelReady):
            return event
        if isinstance(event, ModelFailed):
            raise ModelLoadError(event.message)
        if event is None:
            raise ModelLoadError(f"the embedding process did not load its model within {timeout} s")
        raise ModelLoadError(f"the embedding process stopped before its model was ready ({event})")

    def close(self, timeout: float = 5.0) -> None:
        """Ask the process to stop, and kill it if it does not within ``timeout`` seconds."""
        if self._process.poll() is None:
            self._outbox.put(Shutdown())
        self._outbox.put(None)
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout)
        self._sender.join(timeout)
        self._connection.close()
        self._end()

    @property
    def pid(self) -> int:
        return self._process.pid

    def is_alive(self) -> bool:
        """Whether the process is still running."""
        return self._process.poll() is None
