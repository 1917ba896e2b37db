"""The explorer's ``v`` key: configuration B, a second ConfigurationRun beside A's with its own
process, ranked over what it has embedded so far for the question on screen, shown under A's hits.

A mixin of the app, as the lab keys are. B's process events arrive as A's do (the app's one
``on_run_event``), and the run, not this module, keeps B's state; here are the form, B's ranking and
its pane. Workers only post messages.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual import work
from textual.worker import get_current_worker

from raglens.embedding_events import DEFAULT_MODEL_NAME
from raglens.run import ConfigurationRun
from raglens.ui.explorer_screen import ExplorerScreen
from raglens.ui.futures import result_unless_cancelled
from raglens.ui.messages import VersusRanked, WindowsCut, while_shown
from raglens.ui.screens.versus import VersusChoice, VersusScreen
from raglens.ui.widgets.score_strip import ScoreStrip
from raglens.ui.widgets.versus_hits import VersusHits

if TYPE_CHECKING:
    from collections.abc import Mapping
    from concurrent.futures import Future

    import numpy as np

    from raglens.compare import VersusRanking
    from raglens.configuration import RetrievalConfig
    from raglens.corpus import Corpus
    from raglens.diagnostics.golden import ExpectedRef
    from raglens.diagnostics.symbols import Definition
    from raglens.embedding_events import ModelChoice
    from raglens.embedding_process import EmbeddingProcess
    from raglens.index import IndexSnapshot
    from raglens.search import SearchResult
    from raglens.ui.app_config import AppConfig
    from raglens.windows import WindowColumns, WindowParams

VERSUS_RERANK_INTERVAL_S = 0.5
"""While B embeds, its ranking is redone at most this often (and once more when it is complete)."""


def describe_b(b: ConfigurationRun) -> str:
    """``B · 500/50 chars · all-MiniLM-L6-v2 · 130 windows, 40 of 130 embedded``."""
    label = b.config.describe()
    if b.model is not None:
        label = label.replace(b.config.model or DEFAULT_MODEL_NAME, b.model.describe(), 1)
    if b.stopped:
        why = b.failure or "its embedding process ended too often"
        return f"B · {label} · stopped: {why}"
    if b.index is None:
        return f"B · {label} · loading"
    embedded, total = b.index.embedded_count, b.index.window_count
    state = "all embedded" if embedded == total else f"{embedded} of {total} embedded"
    return f"B · {label} · {total} windows, {state}"


class VersusActions(ExplorerScreen):
    """Configuration B beside A: the form, B's run, and its ranking of the question on screen."""

    def __init__(self, config: AppConfig, process: EmbeddingProcess | None = None) -> None:
        super().__init__(config, process)
        self.versus_ranking: VersusRanking | None = None
        """B's latest ranking; drawn only under the question it ranked."""
        self._versus_ranked_at = 0.0
        self.versus_overlay = True
        """Whether the window view marks where B's windows start (o), while B is compared."""

    def versus_starts(self, path: str) -> frozenset[int]:
        """The lines of ``path`` where B's windows start, while B's grid is laid over A's."""
        b = self.b
        if b is None or not self.versus_overlay or path not in b.file_rows:
            return frozenset()
        return frozenset(window.line_start for window in b.file_windows(path))

    def action_versus_overlay(self) -> None:
        """Lay B's window grid over A's in the window view, or take it away."""
        if self.b is None:
            self.notify("o lays configuration B's windows over A's: start B with v first", timeout=4)
            return
        self.versus_overlay = not self.versus_overlay
        self._redraw_file()

    def _redraw_file(self) -> None:
        if self.shown_window is not None and self.query("#panes"):
            self.show_file(*self.shown_window, scroll=False)

    def action_versus(self) -> None:
        """Open the form for configuration B (prefilled with B, or with A the first time)."""
        current = self.b.config if self.b is not None else None
        self.app.push_screen(VersusScreen(self.a.config, current), self._versus_chosen)

    def _versus_chosen(self, choice: VersusChoice | None) -> None:
        if choice is None:
            return
        self.stop_versus()
        if choice.config is None:
            return
        b = self.b = ConfigurationRun(next(self.run_ids), choice.config, self.config.engine)
        b.start()
        self.narrate(f"configuration B: {choice.config.describe()}, in a process of its own")
        self.show_versus()
        self.relay_events(b)
        if self.corpus is not None:
            self.cut_windows(b.run_id, self.corpus, b.config.params, b.choice)

    def start_versus(self, config: RetrievalConfig) -> None:
        """Compare with ``config`` as B, as the v form does (an eval grid's row, opened with a case)."""
        self._versus_chosen(VersusChoice(config))

    def stop_versus(self) -> None:
        """Stop comparing: B's process ends and its hits leave the screen."""
        b, self.b = self.b, None
        self.versus_ranking = None
        if b is not None:
            b.close()
        if self.query("#panes"):
            self.query_one(VersusHits).clear()
            self.query_one(ScoreStrip).show_versus(None)
            self._redraw_file()
            self.query_one("#right").remove_class("-comparing")

    def versus_corpus_changed(self, corpus: Corpus) -> None:
        """The corpus was read (again): B cuts its windows if it has none, and starts afresh only if a
        file changed; A's own settings (w) re-read the corpus too, and leave B as it is."""
        b = self.b
        if b is None:
            return
        if b.corpus is None:
            self.cut_windows(b.run_id, corpus, b.config.params, b.choice)
        elif b.corpus.texts() != corpus.texts():
            self._versus_chosen(VersusChoice(b.config))

    @work(
        thread=True,
        exclusive=True,
        group="versus-corpus",
        exit_on_error=False,
        description="cutting B's windows",
    )
    def cut_windows(self, run_id: int, corpus: Corpus, params: WindowParams, choice: ModelChoice) -> None:
        """Cut a run's windows from a corpus already read, with their index as stored where the files are
        unchanged since it was (the model ``choice`` names); a newer cut (the corpus read again) wins."""
        from raglens.stored_index import cut_with_stored_index

        window_set, place = cut_with_stored_index(corpus, params, self.cache_dir, choice)
        if not get_current_worker().is_cancelled:
            self.post_message(WindowsCut(run_id, params, corpus, window_set, place))

    @work(thread=True, exclusive=True, group="versus-rank", exit_on_error=False, description="ranking B")
    def rank_versus(
        self,
        run_id: int,
        question: int,
        vector: Future[np.ndarray],
        b_index: IndexSnapshot,
        a_result: SearchResult,
        a_windows: WindowColumns,
        k: int,
        pinned: Mapping[ExpectedRef, tuple[Definition, ...]],
    ) -> None:
        from raglens.compare import rank_versus

        query_vector = result_unless_cancelled(vector)
        if query_vector is None:
            return
        ranking = rank_versus(question, query_vector, b_index, a_result, a_windows, k, pinned)
        if not get_current_worker().is_cancelled:
            self.post_message(VersusRanked(run_id, ranking))

    # Handlers own B's state; the app calls these from its run handlers when the run is B.

    def versus_windows_cut(self) -> None:
        """B's windows are cut: lay its grid over the open file and rank once vectors come."""
        self.show_versus()
        self._redraw_file()

    def versus_vectors_arrived(self) -> None:
        """More of B is embedded: rank again, at most every VERSUS_RERANK_INTERVAL_S until complete."""
        b = self.b
        if b is None:
            return
        if b.is_complete or time.monotonic() - self._versus_ranked_at >= VERSUS_RERANK_INTERVAL_S:
            self.rank_versus_now()

    def rank_versus_now(self) -> None:
        """Rank the question on screen over what B has embedded, once B's model has embedded it."""
        b, a_result, question = self.b, self.last_result, self.shown_question
        if b is None or b.index is None or b.embedded_count == 0 or a_result is None or question is None:
            return
        if not question.text.strip() or not a_result.is_of(self.a.windows):
            return  # no question, or A's hits are of a window set A has re-cut or re-scanned since
        asked = b.ask(question.number, question.text)
        if asked is None:
            return
        self._versus_ranked_at = time.monotonic()
        self.rank_versus(
            b.run_id,
            question.number,
            asked.vector,
            b.index.snapshot(),
            a_result,
            self.a.windows,  # immutable: the worker reads the set as it is now
            self.k,
            self.pins.for_question(question.text) if self.pins is not None else {},
        )

    @while_shown
    def on_versus_ranked(self, message: VersusRanked) -> None:
        b, question = self.b, self.shown_question
        if b is None or message.run_id != b.run_id or question is None:
            return  # a B replaced since, or no question on screen
        if message.ranking.question != question.number:
            return  # another question's ranking: never drawn under this one
        self.versus_ranking = message.ranking
        self.show_versus()

    def show_versus(self) -> None:
        """Draw B's pane: its state, and its ranking if it is of the question on screen."""
        b = self.b
        if b is None:
            return
        ranking, question = self.versus_ranking, self.shown_question
        if ranking is not None and (question is None or ranking.question != question.number):
            ranking = None
        self.query_one("#right").add_class("-comparing")
        self.query_one(VersusHits).show(describe_b(b), ranking, self.k)
        # A BM25 ranking has no place on the cosine axis: its distribution is not drawn under A's.
        cosine = ranking is not None and ranking.result.cosine
        self.query_one(ScoreStrip).show_versus(ranking.profile if ranking is not None and cosine else None)
