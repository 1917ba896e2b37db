"""The embedding process's side for a BM25 configuration: index each window set's tokens, score questions.

A lexical run speaks the embedding process's protocol, so the explorer drives it as it drives a model
(restarts, window sets, questions): its ModelReady says ``lexical``; a window set is indexed whole
(BM25's weights need every window) and reported as read in full, with no vectors; a question's answer
is every window's BM25 score (-inf where it shares no token), of the window set indexed last. The
tokenising of a large corpus takes seconds of pure Python: here, it never holds the app's GIL.
"""

from __future__ import annotations

import dataclasses
import sys
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING

import numpy as np

from raglens.bm25_index import BM25_ENGINE, BM25Scorer
from raglens.embedding_events import (
    EmbedFirst,
    EmbedQuery,
    ExplainScore,
    IndexWindows,
    ModelReady,
    ProcessEvent,
    QueryEmbedded,
    ReadingExtent,
    Request,
    ScoreExplained,
    ServerConfig,
    Shutdown,
    TextsInParts,
    VectorsEmbedded,
    WindowsDone,
    WindowTexts,
)

if TYPE_CHECKING:
    from raglens.attribution import Attribution

if sys.version_info >= (3, 11):
    from typing import assert_never
else:  # pragma: no cover
    from typing_extensions import assert_never


class LexicalServer:
    """A BM25 configuration's process state: the window set indexed last, and questions waiting for one."""

    def __init__(self, connection: Connection, config: ServerConfig) -> None:
        """``config`` is the process's first message, as a model's server takes it; BM25 needs none of it."""
        self._connection = connection
        self._scorer: BM25Scorer | None = None
        self._generation: int | None = None
        """The window set the scorer indexed."""
        self._waiting: list[EmbedQuery] = []
        """Questions asked before any window set was indexed: answered once one is."""
        self._texts_in_parts = TextsInParts()

    def send(self, event: ProcessEvent) -> None:
        self._connection.send(event)  # one thread: no other sender to wait for

    def serve(self) -> None:
        """Answer requests until shutdown or a closed pipe."""
        self.send(ModelReady(**dataclasses.asdict(BM25_ENGINE)))
        while True:
            request: Request = self._connection.recv()
            match request:
                case WindowTexts():
                    self._texts_in_parts.add(request)
                case IndexWindows():
                    self._index(self._texts_in_parts.join(request))
                case EmbedQuery():
                    self._answer(request)
                case ExplainScore():
                    self._explain(request)
                case EmbedFirst():
                    pass  # a set is indexed whole, at once: no row comes before another
                case Shutdown():
                    return
                case ServerConfig():
                    raise TypeError("the process was configured already")
                case _:
                    assert_never(request)

    def close(self) -> None:
        """Nothing to release: a lexical run keeps no cache and no engine."""

    def _index(self, request: IndexWindows) -> None:
        texts = request.texts
        self._scorer = BM25Scorer(texts)
        self._generation = request.generation
        counts = self._scorer.token_counts  # the tokens the index was built of, not counted again
        extents = tuple(ReadingExtent(count, len(text)) for count, text in zip(counts, texts, strict=True))
        rows = tuple(range(len(texts)))
        self.send(VectorsEmbedded(request.generation, rows, np.zeros((len(texts), 0), np.float32), extents))
        self.send(WindowsDone(request.generation))
        waiting, self._waiting = self._waiting, []
        for question in waiting:
            self._answer(question)

    def _answer(self, request: EmbedQuery) -> None:
        if self._scorer is None:
            self._waiting.append(request)
            return
        self.send(QueryEmbedded(request.query_id, self._scorer.scores(request.text)))

    def _explain(self, request: ExplainScore) -> None:
        from raglens.attribution import Unexplained

        scorer = self._scorer
        if scorer is None or request.generation != self._generation or not 0 <= request.row < scorer.count:
            answer: Attribution = Unexplained("BM25 has not indexed this window set yet")
        elif scorer.texts[request.row] != request.window_text:
            answer = Unexplained("the window's text is not the one BM25 indexed")
        else:
            try:
                answer = scorer.explain(request.question, request.row)
            except Exception as error:  # an explanation that fails is said; it never ends the process
                answer = Unexplained(
                    f"BM25's terms could not be taken apart: {type(error).__name__}: {error}"
                )
        self.send(ScoreExplained(request.request_id, answer))
