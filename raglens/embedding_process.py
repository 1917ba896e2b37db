"""The embedding model in a process of its own, streaming vectors back over a pipe.

Importing torch and tokenising hold the GIL for up to half a second at a time, so a UI must not
host the model in a thread. Requests and replies are small JSON frames; vectors travel as raw
float32 bytes in the frame after their header. A query is answered between two window batches,
so a search never waits for the whole index.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import multiprocessing
import os
import threading
from collections import deque
from dataclasses import dataclass
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from raglens.embedding import Embedder, SentenceTransformerEmbedder, embedder_from_factory
from raglens.embedding_events import (
    CacheTrouble,
    ModelFailed,
    ModelReady,
    ProcessEnded,
    ProcessEvent,
    QueryEmbedded,
    ReadingExtent,
    RequestCancelled,
    VectorsEmbedded,
    WindowsDone,
)
from raglens.errors import ModelLoadError, RaglensError
from raglens.fingerprint import ModelFingerprint
from raglens.onnx_model import export_model, export_path, export_stands_in, export_wanted, load_exported
from raglens.vector_cache import ModelCache, VectorCache

PROCESS_BATCH_SIZE = 8
"""Windows per batch in the process: small enough that a query waits at most ~0.4 s on a 2-core CPU."""


def _send(connection: Connection, header: dict[str, Any], vectors: np.ndarray | None = None) -> None:
    connection.send_bytes(json.dumps(header).encode())
    if vectors is not None:
        connection.send_bytes(np.ascontiguousarray(vectors, dtype=np.float32).tobytes())


def _receive_vectors(connection: Connection, rows: int, dimension: int) -> np.ndarray:
    return np.frombuffer(connection.recv_bytes(), dtype=np.float32).reshape(rows, dimension)


def _load_embedder(
    factory: str | None,
    model: str | None,
    device: str | None,
    offline: bool,
    cache_dir: str | None,
    fingerprint: ModelFingerprint | None,
    precision: str,
) -> Embedder:
    """The model's ONNX export when the cache has one (no torch: ready in ~0.5 s), else the model.

    The export is fp32, so it stands in for the model only at fp32.
    """
    if factory is None:
        if cache_dir is not None and fingerprint is not None and export_stands_in(precision, device):
            exported = load_exported(Path(cache_dir), fingerprint)
            if exported is not None:
                return exported
        return SentenceTransformerEmbedder(model, device, offline=offline, precision=precision)
    return embedder_from_factory(factory)


def _silence_output(log_path: str | None) -> None:
    """Point the process's stdout and stderr at a log file (or nowhere), so nothing paints over a UI."""
    target = os.open(log_path or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(target, 1)
    os.dup2(target, 2)
    os.close(target)


@dataclass
class _WindowJob:
    request_id: int
    texts: list[str]
    position: int = 0


def serve(
    connection: Connection,
    model: str | None,
    device: str | None,
    offline: bool,
    factory: str | None,
    log_path: str | None,
    batch_size: int,
    cache_dir: str | None = None,
    fingerprint: ModelFingerprint | None = None,
    precision: str = "fp32",
) -> None:
    """The process's main loop: load the model, then answer requests until shutdown or a closed pipe.

    With ``cache_dir`` and ``fingerprint``, every embedded batch is also stored in the vector cache,
    so the UI's process never writes to it.
    """
    _silence_output(log_path)
    # Embedding keeps every core busy; a lower priority lets the UI's process run the moment it needs to.
    with contextlib.suppress(OSError, AttributeError):
        os.nice(10)
    try:
        embedder = _load_embedder(factory, model, device, offline, cache_dir, fingerprint, precision)
    except Exception as error:  # any failure is one message to the parent, not a dead pipe
        _send(connection, {"type": "failed", "message": _failure_message(error)})
        return
    _send(
        connection,
        {
            "type": "ready",
            "name": embedder.name,
            "dimension": embedder.dimension,
            "max_seq_length": embedder.max_seq_length,
            "device": getattr(embedder, "device", "cpu"),
            "precision": getattr(embedder, "precision", "fp32"),
        },
    )
    cache = _open_cache(connection, cache_dir, fingerprint, embedder.dimension)
    jobs: deque[_WindowJob] = deque()
    exporter: threading.Thread | None = None
    try:
        while True:
            # Answer every waiting request first; block only when no window work is left.
            while not jobs or connection.poll(0):
                request = json.loads(connection.recv_bytes())
                kind = request["type"]
                if kind == "shutdown":
                    return
                if kind == "query":
                    vector = embedder.encode_query(request["text"])
                    _send(connection, {"type": "query", "id": request["id"]}, vector[np.newaxis, :])
                elif kind == "windows":
                    jobs.append(_WindowJob(request["id"], request["texts"]))
                elif kind == "cancel":
                    before = len(jobs)
                    jobs = deque(job for job in jobs if job.request_id != request["id"])
                    if len(jobs) != before:
                        _send(connection, {"type": "cancelled", "id": request["id"]})
            job = jobs[0]
            batch = job.texts[job.position : job.position + batch_size]
            vectors = embedder.encode(batch)
            extents = embedder.reading_extents(batch)
            header = {
                "type": "vectors",
                "id": job.request_id,
                "start": job.position,
                "rows": len(batch),
                "extents": [[e.token_count, e.chars_read] for e in extents],
            }
            _send(connection, header, vectors)
            if cache is not None:
                cache.store(batch, vectors, extents)
                _report_cache_trouble(connection, cache.cache)
            job.position += len(batch)
            if job.position >= len(job.texts):
                jobs.popleft()
                _send(connection, {"type": "done", "id": job.request_id})
                if not jobs and exporter is None:
                    exporter = _export_in_background(embedder, cache_dir, fingerprint)
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return  # the parent is gone
    except Exception as error:  # the model failed mid-stream: say why before the process exits
        with contextlib.suppress(OSError):
            _send(connection, {"type": "failed", "message": _failure_message(error)})


def _export_in_background(
    embedder: Embedder, cache_dir: str | None, fingerprint: ModelFingerprint | None
) -> threading.Thread:
    """Once the windows are embedded, export the model to ONNX so the next launch skips torch.

    A thread of this process: torch is loaded here already, and queries keep being answered.
    """

    def export() -> None:
        if cache_dir is None or fingerprint is None:
            return
        target = export_path(Path(cache_dir), fingerprint)
        if export_wanted(embedder, fingerprint, target):
            with contextlib.suppress(Exception):  # only the next launch's fast path is lost
                export_model(fingerprint, target)

    thread = threading.Thread(target=export, name="raglens-onnx-export", daemon=True)
    thread.start()
    return thread


def _open_cache(
    connection: Connection, cache_dir: str | None, fingerprint: ModelFingerprint | None, dimension: int
) -> ModelCache | None:
    if cache_dir is None or fingerprint is None:
        return None
    cache = VectorCache.open(Path(cache_dir))
    _report_cache_trouble(connection, cache)
    return ModelCache(cache, fingerprint, dimension) if cache.is_usable else None


def _report_cache_trouble(connection: Connection, cache: VectorCache) -> None:
    while cache.warnings:
        _send(connection, {"type": "cache", "message": cache.warnings.pop(0)})


def _failure_message(error: Exception) -> str:
    """A raglens error's own message, or the exception's type and text for anything else."""
    return str(error) if isinstance(error, RaglensError) else f"{type(error).__name__}: {error}"


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker with a real stderr.

    The tracker hands ``sys.stderr.fileno()`` to its own child; under Textual, stderr is captured
    and has no file descriptor, and spawning fails with "bad value(s) in fds_to_keep".
    """
    with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(devnull):
        resource_tracker.ensure_running()


class EmbeddingProcess:
    """A handle on the embedding process: submit requests from any thread, read events from one."""

    def __init__(
        self,
        model: str | None = None,
        device: str | None = None,
        *,
        offline: bool = True,
        factory: str | None = None,
        log_path: str | None = None,
        batch_size: int = PROCESS_BATCH_SIZE,
        cache_dir: str | None = None,
        fingerprint: ModelFingerprint | None = None,
        precision: str = "fp32",
    ) -> None:
        """Start the process; it imports and loads the model in the background.

        ``factory`` (``"module:callable"``) builds another embedder instead of sentence-transformers,
        for tests that need the protocol without the model. With ``cache_dir`` and ``fingerprint``
        the process stores every vector it makes in the vector cache.
        """
        context = multiprocessing.get_context("spawn")  # fork would copy the parent's threads' locks
        _start_resource_tracker()
        self._connection, child_end = context.Pipe(duplex=True)
        self._process = context.Process(
            target=serve,
            args=(
                child_end,
                model,
                device,
                offline,
                factory,
                log_path,
                batch_size,
                cache_dir,
                fingerprint,
                precision,
            ),
            name="raglens-embedder",
            daemon=True,
        )
        self._process.start()
        child_end.close()
        self._send_lock = threading.Lock()
        self._request_ids = itertools.count(1)
        self._dimension: int | None = None
        self._ended = False

    def _submit(self, request: dict[str, Any]) -> None:
        with self._send_lock:
            self._connection.send_bytes(json.dumps(request).encode())

    def embed_query(self, text: str) -> int:
        """Ask for a query's vector; the reply is a :class:`QueryEmbedded` with the returned id."""
        request_id = next(self._request_ids)
        self._submit({"type": "query", "id": request_id, "text": text})
        return request_id

    def embed_windows(self, texts: list[str]) -> int:
        """Ask for the vectors of ``texts``, streamed back batch by batch as :class:`VectorsEmbedded`."""
        request_id = next(self._request_ids)
        self._submit({"type": "windows", "id": request_id, "texts": texts})
        return request_id

    def cancel(self, request_id: int) -> None:
        """Stop a window request after the batch under way."""
        self._submit({"type": "cancel", "id": request_id})

    def next_event(self, timeout: float | None = None) -> ProcessEvent | None:
        """The next event from the process, or None when none came within ``timeout`` seconds.

        Call it from one thread only.
        """
        if self._ended:
            return ProcessEnded(self._process.exitcode)
        try:
            if not self._connection.poll(timeout):
                return None
            header = json.loads(self._connection.recv_bytes())
        except (EOFError, OSError):
            self._ended = True
            self._process.join(timeout=5)
            return ProcessEnded(self._process.exitcode)
        kind = header["type"]
        if kind == "ready":
            self._dimension = int(header["dimension"])
            return ModelReady(
                header["name"],
                self._dimension,
                header["max_seq_length"],
                header["device"],
                header["precision"],
            )
        if kind == "failed":
            return ModelFailed(header["message"])
        if kind == "done":
            return WindowsDone(header["id"])
        if kind == "cancelled":
            return RequestCancelled(header["id"])
        if kind == "cache":
            return CacheTrouble(header["message"])
        assert self._dimension is not None, "vectors arrived before the model was ready"
        if kind == "query":
            return QueryEmbedded(header["id"], _receive_vectors(self._connection, 1, self._dimension)[0])
        vectors = _receive_vectors(self._connection, header["rows"], self._dimension)
        extents = tuple(ReadingExtent(count, read) for count, read in header["extents"])
        return VectorsEmbedded(header["id"], header["start"], vectors, extents)

    def wait_until_ready(self, timeout: float | None = None) -> ModelReady:
        """Block until the model is loaded; raise :class:`ModelLoadError` if it cannot be."""
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
        if self._process.is_alive():
            with contextlib.suppress(OSError):  # the pipe may already be closed by a dying process
                self._submit({"type": "shutdown"})
            self._process.join(timeout)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(timeout)
        self._connection.close()
        self._ended = True

    @property
    def pid(self) -> int | None:
        return self._process.pid

    def is_alive(self) -> bool:
        """Whether the process is still running."""
        return self._process.is_alive()
