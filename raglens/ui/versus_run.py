"""Configuration B in the explorer: its own windows, embedding process and index, beside A's.

No Textual here: the app's handlers call these methods and draw what they return.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from raglens.configuration import RetrievalConfig
from raglens.embedding_events import ModelReady, VectorsEmbedded
from raglens.ui.app_config import AppConfig, start_embedding_process
from raglens.windows import rows_by_file

if TYPE_CHECKING:
    import numpy as np

    from raglens.compare import Comparison
    from raglens.diagnostics.score_profile import ScoreProfile
    from raglens.embedding_process import EmbeddingProcess
    from raglens.index import VectorIndex
    from raglens.search import SearchResult
    from raglens.windows import Window


def config_of(app_config: AppConfig) -> RetrievalConfig:
    """The explorer's own configuration (A) in the form ``v`` edits."""
    return RetrievalConfig(
        app_config.params, app_config.model, app_config.max_seq_length, app_config.precision
    )


def app_config_for(app_config: AppConfig, config: RetrievalConfig) -> AppConfig:
    """A's start-up settings with B's windows and model settings: what B's process is started with."""
    return replace(
        app_config,
        params=config.params,
        model=config.model,
        max_seq_length=config.max_seq_length,
        precision=config.precision,
    )


@dataclass(frozen=True)
class VersusRanking:
    """B's ranking of one query, and how its hits and A's moved between the two."""

    query: str
    result: SearchResult
    comparison: Comparison
    profile: ScoreProfile
    """B's score distribution, drawn under A's in the score strip."""
    expected: tuple[tuple[str, int | None, int | None], ...] = ()
    """Each pinned answer: its label, its rank in A and in B."""


class VersusRun:
    """One configuration B: its process (started at once), windows once cut, index once the model is ready."""

    def __init__(self, app_config: AppConfig, config: RetrievalConfig, generation: int) -> None:
        self.config = config
        self.generation = generation
        """Which B this is: events of a B replaced since are dropped."""
        self.process: EmbeddingProcess = start_embedding_process(app_config_for(app_config, config))
        self.windows: list[Window] = []
        self.corpus_texts: dict[str, str] | None = None
        """The files (path to text) B's windows were cut from; None until they are cut."""
        self.file_rows: dict[str, range] = {}
        self.model: ModelReady | None = None
        self.index: VectorIndex | None = None
        self.failed: str | None = None
        """Why B stopped (its model failed, its process ended), once it has."""
        self.query: tuple[str, Future[np.ndarray]] | None = None
        """The standing question and its vector as B's model embeds it."""
        self.ranking: VersusRanking | None = None

    def windows_cut(self, windows: list[Window], texts: list[str]) -> None:
        """B's windows are cut: send their texts to its process (it answers from the cache first)."""
        self.windows = windows
        self.file_rows = rows_by_file(windows)
        self.process.index_windows(self.generation, texts)
        self._make_index()

    def model_ready(self, ready: ModelReady) -> None:
        self.model = ready
        self._make_index()

    def _make_index(self) -> None:
        if self.index is None and self.model is not None and self.windows:
            from raglens.index import VectorIndex

            self.index = VectorIndex(self.windows, self.model.dimension)

    def vectors_arrived(self, event: VectorsEmbedded) -> bool:
        """Fill B's index; whether the event was B's current window set's."""
        if self.index is None or event.generation != self.generation:
            return False
        self.index.fill(event.rows, event.vectors, event.extents)
        return True

    def ask(self, query: str) -> Future[np.ndarray] | None:
        """Have B's model embed ``query`` (once per question); None when B has stopped."""
        if self.failed is not None:
            return None
        if self.query is None or self.query[0] != query:
            self.query = (query, self.process.embed_query(query))
        return self.query[1]

    def describe(self) -> str:
        """``B · 500/50 chars · all-MiniLM-L6-v2 · 40 of 130 embedded``."""
        label = self.config.describe()
        if self.model is not None:
            label = label.replace(self.config.model or "all-MiniLM-L6-v2", self.model.describe(), 1)
        if self.failed is not None:
            return f"B · {label} · stopped: {self.failed}"
        if self.index is None:
            return f"B · {label} · loading"
        embedded = self.index.embedded_count
        total = self.index.window_count
        state = "all embedded" if embedded == total else f"{embedded} of {total} embedded"
        return f"B · {label} · {total} windows, {state}"

    def close(self) -> None:
        self.process.close(timeout=2)
