"""The embedding process's side: open the engines, read the cache, embed windows and answer queries.

Run as ``python -m raglens.embedding_server FD`` by :class:`raglens.embedding_process.EmbeddingProcess`,
with one end of a socket pair as ``FD``. Everything that touches the model or the vector cache happens
here, so the app's process never imports torch nor writes SQLite. A query is answered between two
window batches, so a search never waits for the whole index.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import threading
from functools import singledispatchmethod
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from raglens.configuration import is_bm25
from raglens.diagnostics.control_questions import CONTROL_QUESTIONS
from raglens.embedding_events import (
    CacheLookedUp,
    CacheTrouble,
    EmbedFirst,
    EmbedQuery,
    EngineNote,
    EngineTrouble,
    ExplainScore,
    IndexWindows,
    ModelFailed,
    ModelReady,
    ProcessEvent,
    QueryEmbedded,
    Request,
    ScoreExplained,
    ServerConfig,
    Shutdown,
    TextsInParts,
    VectorsEmbedded,
    WindowsDone,
    WindowTexts,
)
from raglens.engine import Engines
from raglens.errors import RaglensError
from raglens.indexing import IndexBuilder, cached_batch
from raglens.parent_death import die_with_parent
from raglens.vector_cache import ModelCache, VectorCache, keys_of

if TYPE_CHECKING:
    from raglens.lexical_server import LexicalServer

CACHED_ROWS_PER_EVENT = 8_192
"""Cached vectors travel in events of at most this many rows (12 MiB at 384 dimensions): the app
stores each event's rows on its event loop, and 100k rows in one event held it for ~0.3 s."""


class _Stopped(Exception):
    """The parent asked the process to stop."""


class EmbeddingServer:
    """The process's state: its engines, the cache, and the window set being embedded."""

    def __init__(self, connection: Connection, config: ServerConfig) -> None:
        self._connection = connection
        self._sending = threading.Lock()
        self._config = config
        self._cache: VectorCache | None = None
        self._model_cache: ModelCache | None = None
        cache_dir = Path(config.cache_dir) if config.cache_dir is not None else None
        if cache_dir is not None:
            cache = VectorCache.open(cache_dir)
            self._report_cache_trouble(cache)
            if cache.is_usable:
                self._cache = cache
                self._model_cache = ModelCache.for_model(cache, config.choice)
        model_cache = self._model_cache
        self._texts_in_parts = TextsInParts(keys_of if model_cache is not None else None)
        fingerprint = model_cache.fingerprint if model_cache is not None else None
        export_dir = cache_dir if model_cache is not None else None
        # A graph raglens writes itself (the bundled model's, ~3 s, no torch) is written as the engines
        # open. A traced export would hold every query for its seconds: it follows the windows
        # instead, in a thread, for the next launch.
        self.engines = Engines(
            config.choice,
            fingerprint,
            export_dir,
            on_note=lambda note: self.send(EngineNote(note)),
            on_warning=lambda warning: self.send(EngineTrouble(warning)),
            export_first_from=None,
        )
        self._builder: IndexBuilder | None = None
        self._generation = 0
        self._exporter: threading.Thread | None = None

    def send(self, event: ProcessEvent) -> None:
        with self._sending:  # the export thread may speak too: one event at a time on the socket
            self._connection.send(event)

    def serve(self) -> None:
        """Answer requests until shutdown or a closed pipe; embed a batch whenever none is waiting."""
        fingerprint = self._model_cache.fingerprint.digest if self._model_cache is not None else None
        self.send(ModelReady(**dataclasses.asdict(self.engines.info()), cache_fingerprint=fingerprint))
        # Embedding keeps every core busy; a lower priority lets the UI's process run the moment it
        # needs to. Not before: opening the engine is what a warm start's first hits wait for.
        with contextlib.suppress(OSError, AttributeError):
            os.nice(10)
        try:
            while True:
                while self._builder is None or self._connection.poll(0):
                    self.handle(self._connection.recv())
                self._embed_one_batch()
        except _Stopped:
            return

    @singledispatchmethod
    def handle(self, request: Request) -> None:
        raise TypeError(f"the embedding process does not know {type(request).__name__}")

    @handle.register
    def _(self, request: EmbedQuery) -> None:
        # The noise band's control questions, asked on every start, come from the cache once they are
        # there; a user's questions are not kept (each pause while typing is one).
        model_cache = self._model_cache if request.text in CONTROL_QUESTIONS else None
        engine = self.engines.query_engine() if model_cache is not None else ""
        cached = model_cache.lookup_queries([request.text], engine)[0] if model_cache is not None else None
        vector = cached if cached is not None else self.engines.for_queries().encode_query(request.text)
        self.send(QueryEmbedded(request.query_id, vector))  # before the write: no answer waits on a lock
        if model_cache is not None and cached is None:
            model_cache.store_queries([request.text], engine, vector[np.newaxis])
            self._report_cache_trouble(model_cache.cache)

    @handle.register
    def _(self, request: ExplainScore) -> None:
        from raglens.attribution import Unexplained, explain_with

        # The query engine: the fp32 export when there is one, whose vectors equal the model's.
        try:
            attribution = explain_with(self.engines.for_queries(), request.question, request.window_text)
        except Exception as error:  # an explanation that fails is said; it never ends the process
            attribution = Unexplained(f"the token vectors could not be computed: {_failure_message(error)}")
        self.send(ScoreExplained(request.request_id, attribution))

    @handle.register
    def _(self, request: WindowTexts) -> None:
        self._texts_in_parts.add(request)

    @handle.register
    def _(self, request: IndexWindows) -> None:
        request, keys = self._texts_in_parts.join_keyed(request)
        self._generation = request.generation
        missing = list(range(len(request.texts)))
        if self._model_cache is not None:
            entries = self._model_cache.lookup(request.texts, keys)
            oldest = min((entry.stored for entry in entries if entry is not None), default=None)
            cached = cached_batch(entries)
            self.send(CacheLookedUp(request.generation, len(cached.rows), len(entries), oldest))
            for start in range(0, len(cached.rows), CACHED_ROWS_PER_EVENT):
                end = start + CACHED_ROWS_PER_EVENT
                rows, extents = cached.rows[start:end], cached.extents[start:end]
                self.send(VectorsEmbedded(request.generation, rows, cached.vectors[start:end], extents))
            missing = [row for row, entry in enumerate(entries) if entry is None]
            self._report_cache_trouble(self._model_cache.cache)
        builder = IndexBuilder(
            request.texts,
            missing,
            self.engines.for_windows,
            cache=self._model_cache,
            batch_size=self._config.batch_size,
        )
        builder.prioritize(request.first)
        self._builder = builder
        if builder.pending_count == 0:
            self._finish_window_set()

    @handle.register
    def _(self, request: EmbedFirst) -> None:
        if self._builder is not None and request.generation == self._generation:
            self._builder.prioritize(request.rows)

    @handle.register
    def _(self, request: Shutdown) -> None:
        raise _Stopped

    def _embed_one_batch(self) -> None:
        assert self._builder is not None
        batch = self._builder.next_batch()
        if batch is not None:
            self.send(VectorsEmbedded(self._generation, batch.rows, batch.vectors, batch.extents))
            if self._model_cache is not None:
                self._report_cache_trouble(self._model_cache.cache)
        if self._builder.pending_count == 0:
            self._finish_window_set()

    def _finish_window_set(self) -> None:
        self._builder = None
        self.send(WindowsDone(self._generation))
        if self._exporter is None:
            # A thread of this process: torch is loaded here already, and queries keep being answered.
            # The export is for the next launch: this one keeps the engine its scores came from.
            self._exporter = threading.Thread(
                target=self.engines.export_if_wanted,
                kwargs={"use_now": False},
                name="raglens-onnx-export",
                daemon=True,
            )
            self._exporter.start()

    def _report_cache_trouble(self, cache: VectorCache) -> None:
        while cache.warnings:
            self.send(CacheTrouble(cache.warnings.pop(0)))

    def close(self) -> None:
        from raglens.onnx_model import abandon_exports

        abandon_exports()  # stopped while exporting: no half-written export stays in the cache
        if self._cache is not None:
            self._cache.close()


def _failure_message(error: Exception) -> str:
    """A raglens error's own message, or the exception's type and text for anything else."""
    return str(error) if isinstance(error, RaglensError) else f"{type(error).__name__}: {error}"


def main(argv: list[str]) -> int:
    """Serve the parent on the socket whose descriptor is ``argv[0]``."""
    die_with_parent()
    connection = Connection(int(argv[0]))
    server: EmbeddingServer | LexicalServer | None = None
    try:
        config = connection.recv()
        assert isinstance(config, ServerConfig), f"expected the server's configuration, got {config!r}"
        try:
            if is_bm25(config.choice.model):
                from raglens.lexical_server import LexicalServer  # a model's process never loads it

                server = LexicalServer(connection, config)
            else:
                server = EmbeddingServer(connection, config)
            server.serve()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            return 0  # the parent is gone
        except Exception as error:  # any failure is one message to the parent, not a dead pipe
            with contextlib.suppress(OSError):
                connection.send(ModelFailed(_failure_message(error)))
            return 1
    except (EOFError, OSError):
        return 0
    finally:
        if server is not None:
            server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
