"""The explorer's ``v`` key: configuration B, embedded by a process of its own through the same cache,
ranked over what it has embedded so far for the same question, shown under A's hits.

A mixin of the app, as the lab keys are; B's state lives in one :class:`VersusRun`. Workers only
post messages; the handlers here own B's state.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from textual import work
from textual.app import App
from textual.worker import get_current_worker

from raglens.embedding_events import (
    CacheLookedUp,
    CacheTrouble,
    ModelFailed,
    ModelReady,
    ProcessEnded,
    VectorsEmbedded,
    WindowsDone,
)
from raglens.printable import printable
from raglens.ui.futures import result_unless_cancelled
from raglens.ui.messages import VersusEvent, VersusRanked, VersusWindowsCut, while_shown
from raglens.ui.screens.versus import VersusChoice, VersusScreen
from raglens.ui.versus_run import VersusRanking, VersusRun, config_of
from raglens.ui.widgets.score_strip import ScoreStrip
from raglens.ui.widgets.versus_hits import VersusHits

if TYPE_CHECKING:
    from concurrent.futures import Future

    import numpy as np

    from raglens.corpus import Corpus
    from raglens.diagnostics.golden import ExpectedRef
    from raglens.diagnostics.symbols import Definition
    from raglens.index import IndexSnapshot
    from raglens.search import SearchResult
    from raglens.ui.app_config import AppConfig
    from raglens.windows import Window, WindowParams

VERSUS_RERANK_INTERVAL_S = 0.5
"""While B embeds, its ranking is redone at most this often (and once more when it is complete)."""


class VersusActions(App[None]):
    """Configuration B beside A: the form, B's process and index, and its ranking of A's question."""

    config: AppConfig
    params: WindowParams
    corpus: Corpus | None
    k: int
    last_result: SearchResult | None
    shown_query: str | None
    pinned: dict[ExpectedRef, tuple[Definition, ...]]
    _windows: list[Window]

    def __init__(self) -> None:
        super().__init__()
        self.versus: VersusRun | None = None
        """Configuration B, while one is being compared."""
        self._versus_generation = 0
        self._versus_ranked_at = 0.0
        self.versus_overlay = True
        """Whether the window view marks where B's windows start (o), while B is compared."""

    if TYPE_CHECKING:

        def _narrate(self, line: str) -> None: ...
        def show_file(self, path: str, current: int | None, *, scroll: bool = True) -> None: ...

    _shown: tuple[str, int | None] | None

    def versus_starts(self, path: str) -> frozenset[int]:
        """The lines of ``path`` where B's windows start, while B's grid is laid over A's."""
        run = self.versus
        if run is None or not self.versus_overlay or path not in run.file_rows:
            return frozenset()
        return frozenset(run.windows[row].line_start for row in run.file_rows[path])

    def action_versus_overlay(self) -> None:
        """Lay B's window grid over A's in the window view, or take it away."""
        if self.versus is None:
            self.notify("o lays configuration B's windows over A's: start B with v first", timeout=4)
            return
        self.versus_overlay = not self.versus_overlay
        self._redraw_file()

    def _redraw_file(self) -> None:
        if self._shown is not None and self.query("#panes"):
            self.show_file(*self._shown, scroll=False)

    def action_versus(self) -> None:
        """Open the form for configuration B (prefilled with B, or with A the first time)."""
        a = replace(config_of(self.config), params=self.params)  # A's windows as set now (w)
        current = self.versus.config if self.versus is not None else None
        self.push_screen(VersusScreen(a, current), self._versus_chosen)

    def _versus_chosen(self, choice: VersusChoice | None) -> None:
        if choice is None:
            return
        self.stop_versus()
        if choice.config is None:
            return
        self._versus_generation += 1
        run = self.versus = VersusRun(self.config, choice.config, self._versus_generation)
        self._narrate(f"configuration B: {choice.config.describe()}, in a process of its own")
        self._show_versus()
        self.relay_versus_events(run)
        if self.corpus is not None:
            self._cut_versus_windows(run, self.corpus)

    def stop_versus(self) -> None:
        """Stop comparing: B's process ends and its hits leave the screen."""
        run, self.versus = self.versus, None
        if run is not None:
            run.close()
        if self.query("#panes"):
            self.query_one(VersusHits).clear()
            self.query_one(ScoreStrip).show_versus(None)
            self._redraw_file()
            self.query_one("#right").remove_class("-comparing")

    def _cut_versus_windows(self, run: VersusRun, corpus: Corpus) -> None:
        run.corpus_texts = corpus.texts()
        self.cut_versus_windows(run.generation, corpus, run.config.params)

    def versus_corpus_changed(self, corpus: Corpus) -> None:
        """The corpus was read (again): B cuts its windows if it has none, and starts afresh only
        if a file changed; A's own settings (w) re-read the corpus too, and leave B as it is."""
        run = self.versus
        if run is None:
            return
        if run.corpus_texts is None:
            self._cut_versus_windows(run, corpus)
        elif run.corpus_texts != corpus.texts():
            self.stop_versus()
            self._versus_chosen(VersusChoice(run.config))

    @work(thread=True, group="versus-corpus", exit_on_error=False, description="cutting B's windows")
    def cut_versus_windows(self, generation: int, corpus: Corpus, params: WindowParams) -> None:
        from raglens.windows import cut_corpus, window_texts

        windows = cut_corpus(corpus, params)
        self.post_message(VersusWindowsCut(generation, windows, window_texts(corpus, windows)))

    @work(thread=True, group="versus-embedder", exit_on_error=False, description="B's embedding process")
    def relay_versus_events(self, run: VersusRun) -> None:
        """Post each event of B's process, tagged with which B it is, until the process ends."""
        import raglens.index  # noqa: F401  (numpy, imported by a relay thread as A's relay does)

        worker = get_current_worker()
        for event in run.process.events(lambda: worker.is_cancelled):
            self.post_message(VersusEvent(run.generation, event))

    @work(thread=True, exclusive=True, group="versus-rank", exit_on_error=False, description="ranking B")
    def rank_versus(
        self,
        generation: int,
        query: str,
        vector: Future[np.ndarray],
        index: IndexSnapshot,
        a_result: SearchResult,
        a_windows: tuple[Window, ...],
        k: int,
        pinned: dict[ExpectedRef, tuple[Definition, ...]],
    ) -> None:
        from raglens.compare import compare
        from raglens.diagnostics.query_report import expected_ranks
        from raglens.diagnostics.score_profile import score_profile
        from raglens.search import rank

        query_vector = result_unless_cancelled(vector)
        if query_vector is None:
            return
        result = rank(index, query_vector, k)
        comparison = compare(a_result, a_windows, result, index.windows, k)
        in_a = expected_ranks(a_result, a_windows, pinned) if pinned else []
        in_b = expected_ranks(result, index.windows, pinned) if pinned else []
        expected = tuple((str(a.ref), a.rank, b.rank) for a, b in zip(in_a, in_b, strict=True))
        if not get_current_worker().is_cancelled:
            ranking = VersusRanking(query, result, comparison, score_profile(result.scores, k), expected)
            self.post_message(VersusRanked(generation, ranking))

    # Handlers own B's state.

    def _current(self, generation: int) -> VersusRun | None:
        run = self.versus
        return run if run is not None and run.generation == generation else None

    @while_shown
    def on_versus_windows_cut(self, message: VersusWindowsCut) -> None:
        run = self._current(message.generation)
        if run is None:
            return
        run.windows_cut(message.windows, message.texts)
        self._narrate(f"B: cut into {len(message.windows)} window(s) of {run.config.params.describe()}")
        self._show_versus()
        self._redraw_file()  # B's grid over the open file

    @while_shown
    def on_versus_event(self, message: VersusEvent) -> None:
        run = self._current(message.generation)
        if run is None:
            return
        event = message.event
        if isinstance(event, ModelReady):
            run.model_ready(event)
            self._narrate(
                f"B: model {event.describe()}, reads at most {event.max_seq_length or 'all'} tokens"
            )
            self.rank_versus_now()
        elif isinstance(event, VectorsEmbedded):
            if run.vectors_arrived(event):
                complete = run.index is not None and run.index.is_complete
                if complete or time.monotonic() - self._versus_ranked_at >= VERSUS_RERANK_INTERVAL_S:
                    self.rank_versus_now()
        elif isinstance(event, CacheLookedUp):
            self._narrate(f"B: {event.found} of {event.total} window(s) from the cache")
        elif isinstance(event, WindowsDone):
            self._narrate("B: every window embedded")
            self.rank_versus_now()
        elif isinstance(event, CacheTrouble):
            self._narrate(f"B: cache: {event.message}")
        elif isinstance(event, ModelFailed):
            run.failed = printable(event.message)
            self.notify(
                run.failed, title="configuration B's model failed", severity="error", timeout=30, markup=False
            )
        elif isinstance(event, ProcessEnded) and run.failed is None:
            run.failed = "its embedding process ended"
            self.notify("B's embedding process ended; v starts B again", severity="warning", timeout=20)
        self._show_versus()

    def rank_versus_now(self) -> None:
        """Rank A's standing question over what B has embedded, if there is a question and a vector."""
        run, a_result, query = self.versus, self.last_result, self.shown_query
        if run is None or run.index is None or run.index.embedded_count == 0 or a_result is None or not query:
            return
        vector = run.ask(query)
        if vector is None:
            return
        self._versus_ranked_at = time.monotonic()
        a_windows = tuple(self._windows)
        self.rank_versus(
            run.generation,
            query,
            vector,
            run.index.snapshot(),
            a_result,
            a_windows,
            self.k,
            dict(self.pinned),
        )

    @while_shown
    def on_versus_ranked(self, message: VersusRanked) -> None:
        run = self._current(message.generation)
        if run is None or message.ranking.query != self.shown_query:
            return
        run.ranking = message.ranking
        self._show_versus()

    def _show_versus(self) -> None:
        run = self.versus
        if run is None:
            return
        ranking = run.ranking if run.ranking is not None and run.ranking.query == self.shown_query else None
        self.query_one("#right").add_class("-comparing")
        self.query_one(VersusHits).show(run.describe(), ranking, self.k)
        self.query_one(ScoreStrip).show_versus(ranking.profile if ranking is not None else None)
