"""The state the explorer's main screen and its parts share, defined once.

The main screen is put together from parts, each in its own module (navigation, the question, the
runs' events, the lab keys, B, the grid); each part subclasses this, so what they share is defined
here and nowhere else, and what one part calls of another is declared here once.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import TYPE_CHECKING

from textual.screen import Screen

from raglens.run import ConfigurationRun, Question
from raglens.ui.app_config import AppConfig
from raglens.ui.widgets.pipeline_log import PipelineLog

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import numpy as np
    from textual.worker import Worker

    from raglens.compare import VersusRanking
    from raglens.configuration import RetrievalConfig
    from raglens.corpus import Corpus
    from raglens.diagnostics.query_report import QueryDiagnostics
    from raglens.embedding_process import EmbeddingProcess
    from raglens.index import VectorIndex
    from raglens.search import SearchResult
    from raglens.ui.pins import Pins
    from raglens.ui.widgets.window_view import FileLens


class ExplorerScreen(Screen[None]):
    """The runs, the corpus and what is on screen: the question, its hits and the open file."""

    def __init__(self, config: AppConfig, process: EmbeddingProcess | None = None) -> None:
        super().__init__()
        self.config = config
        self.k = config.k
        self.run_ids = itertools.count(1)
        """Each configuration run gets the next id; a replaced run's late events name an id no run has."""
        self.a = ConfigurationRun(next(self.run_ids), config.retrieval, config.engine, process)
        """Configuration A: the one the explorer was started with (w changes its windows)."""
        self.b: ConfigurationRun | None = None
        """Configuration B, while one is being compared (v)."""
        self.corpus: Corpus | None = None
        """The corpus being shown, once read."""
        self.last_result: SearchResult | None = None
        self.last_diagnostics: QueryDiagnostics | None = None
        """What the instruments said about ``last_result``."""
        self.shown_question: Question | None = None
        """The question whose hits are on screen (``last_result``'s, once its hits are drawn)."""
        self.shown_window: tuple[str, int | None] | None = None
        """The file in the window view and its selected window."""
        self.heat_on = False
        """Whether the window view colours each window by its score for the question (m)."""
        self.cut_short: float | None = None
        """The share of A's windows the model cuts short, once every one is embedded (status line)."""
        self.pins: Pins | None = None
        """The answers the user expects, and the question they were pinned for."""

    @property
    def cache_dir(self) -> Path | None:
        """The cache folder: vectors, files as last read, stored indexes; None without a cache."""
        named = self.config.engine.cache_dir
        return Path(named) if named is not None else None

    @property
    def shown_query(self) -> str | None:
        """The text of the question whose hits are on screen."""
        return self.shown_question.text if self.shown_question is not None else None

    @property
    def lens_drawn(self) -> bool:
        """Whether the window view may be drawing what the last ranking said of its file: heat, or a
        straddle's note and gutter marks."""
        return self.heat_on or (self.last_diagnostics is not None and bool(self.last_diagnostics.straddles))

    @property
    def index(self) -> VectorIndex | None:
        """A's index."""
        return self.a.index

    def runs(self) -> tuple[ConfigurationRun, ...]:
        """Every configuration being shown: A, and B while one is compared."""
        return (self.a,) if self.b is None else (self.a, self.b)

    def narrate(self, line: str) -> None:
        """Add a line to the pipeline log."""
        self.query_one(PipelineLog).narrate(line)

    def golden_path(self) -> Path:
        """Where ``g`` appends golden cases: ``--golden``, else a file per corpus in the user data folder."""
        from raglens.locations import golden_path_for

        return golden_path_for(self.config.path, self.config.golden_path)

    if TYPE_CHECKING:  # what one part calls of another, declared once for the type checker
        versus_ranking: VersusRanking | None

        def show_file(self, path: str, current: int | None, *, scroll: bool = True) -> None: ...
        def lens_on_file(self, path: str) -> FileLens: ...
        def versus_starts(self, path: str) -> frozenset[int]: ...
        def refresh_status(self) -> None: ...
        def rerank(self, now: bool, within: float = ...) -> None: ...
        def vectors_arrived(self, vectors: np.ndarray, *, in_view: bool, cache_replied: bool) -> None: ...
        def submit_query(self) -> None: ...
        def when_ranked(self, step: Callable[[], object]) -> None: ...
        def stop_following_top_hit(self) -> None: ...
        def ask_control_questions(self) -> None: ...
        def ask_again(self) -> None: ...
        def open_case(self, query: str, expect: Sequence[str]) -> None: ...
        def pin_refs(self, question: str, refs: Sequence[str]) -> bool: ...
        def relay_events(self, run: ConfigurationRun) -> Worker[None]: ...
        def rank_versus_now(self) -> None: ...
        def start_versus(self, config: RetrievalConfig) -> None: ...
        def show_versus(self) -> None: ...
        def versus_vectors_arrived(self) -> None: ...
        def stop_grid(self) -> None: ...
        def settle_heap_soon(self) -> None: ...
        def keep_memo_when_quiet(self) -> None: ...
