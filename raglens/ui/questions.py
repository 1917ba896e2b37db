"""The question: the box, its debounce, the ranking worker, the noise band's control questions, and
drawing the hits of the question asked, never of another.

A part of the main screen (raglens.ui.explorer_screen); workers only post messages.
"""

from __future__ import annotations

import itertools
import time
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.timer import Timer
from textual.widgets import Input
from textual.worker import Worker, get_current_worker

from raglens.diagnostics.control_questions import CONTROL_QUESTIONS
from raglens.precision import choose_precision
from raglens.printable import printable
from raglens.run import Question
from raglens.ui.explorer_screen import ExplorerScreen
from raglens.ui.futures import result_unless_cancelled
from raglens.ui.messages import ControlsEmbedded, LanguageIdentifierReady, RankingReady, while_shown
from raglens.ui.status import ranked_summary
from raglens.ui.widgets.hit_list import HitList
from raglens.ui.widgets.score_strip import ScoreStrip

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from concurrent.futures import Future
    from pathlib import Path

    import numpy as np

    from raglens.corpus import Corpus
    from raglens.diagnostics.golden import ExpectedRef
    from raglens.diagnostics.symbols import Definition
    from raglens.embedding_process import EmbeddingProcess
    from raglens.index import IndexSnapshot
    from raglens.search import SearchResult
    from raglens.ui.app_config import AppConfig

QUERY_DEBOUNCE_S = 0.2
RERANK_INTERVAL_S = 0.5
"""While windows stream in, a standing query is re-ranked at most this often."""
SETTLED_RERANK_INTERVAL_S = 5.0
"""New vectors that can change neither the hits nor the noise band still move the score histogram
and the count ranked: those are drawn at most this often (the summary says how many were ranked).
Where a reading of windows below the hits is on screen (heat on the file in view, pinned answers'
ranks, an identifier's windows, B's "rank in A"), every batch takes RERANK_INTERVAL_S instead."""
FIRST_FILE_WAIT_S = 1.0
"""Launched with a question, its top hit's window opens once its hits are drawn; with no hits after
this long (a cold start), the corpus's first file opens, and the top hit replaces it when it comes."""


class Questions(ExplorerScreen):
    """The question box, A's ranking of the question asked, and the noise band behind it."""

    def __init__(self, config: AppConfig, process: EmbeddingProcess | None = None) -> None:
        super().__init__(config, process)
        self._query_text = config.query
        """The question box's text: asked once the user stops typing (or presses Enter)."""
        self._questions = itertools.count(1)
        self._asked: tuple[int, str] | None = None
        """The question asked last, by number: rankings of any other are not drawn."""
        self._first_file: str | None = None
        """The file to open once the launch question's hits are drawn: painting a whole file first
        took ~0.1 s of the UI thread that the first hits waited for."""
        self._following: tuple[str, int | None] | None = None
        """The top hit the window view shows by itself since start-up, while the user has not moved."""
        self._debounce: Timer | None = None
        self._rerank_timer: Timer | None = None
        self._rerank_due = 0.0
        """When ``_rerank_timer`` fires, on the monotonic clock."""
        self._ranking: tuple[int, Worker[None]] | None = None
        """The question a ranking worker is ranking now, and that worker."""
        self._rank_again = False
        """More vectors or the noise band came while ``_ranking`` ran: rank once more when it ends."""
        self._after_ranking: list[Callable[[], object]] = []
        """What waits for the ranking in progress to end (see :meth:`when_ranked`)."""
        self._controls: dict[str, np.ndarray] = {}
        """The vectors of the off-topic control questions, whose best scores make the noise band."""
        self._controls_asked_of = 0
        """The incarnation of A's process the control questions were last asked of (once each)."""

    @work(thread=True, exclusive=True, group="rank", exit_on_error=False, description="ranking")
    def rank_query(
        self,
        index: IndexSnapshot,
        corpus: Corpus,
        question: Question,
        k: int,
        controls: dict[str, np.ndarray],
        pinned: Mapping[ExpectedRef, tuple[Definition, ...]],
        model: tuple[str | None, str | None],
    ) -> None:
        from raglens.diagnostics.question_language import identifier_ready
        from raglens.model_languages import languages_of
        from raglens.ui.ranking import rank_for_display  # numpy and Pygments: loaded in workers only

        query_vector = result_unless_cancelled(question.vector)
        if query_vector is None:
            return
        # The language check waits for nothing: until the identifier is loaded (in a worker of its
        # own, after the first frame) the ranking goes without it, and is ranked again once it is.
        languages = languages_of(*model) if identifier_ready() else None
        shown = rank_for_display(index, corpus, question.text, query_vector, k, controls, pinned, languages)
        if not get_current_worker().is_cancelled:
            self.post_message(
                RankingReady(question.number, question.text, shown.result, shown.excerpts, shown.diagnostics)
            )

    @work(thread=True, exclusive=True, group="controls", exit_on_error=False, description="noise floor")
    def embed_controls(self, vectors: dict[str, Future[np.ndarray]]) -> None:
        """Wait for the control questions' vectors, which make the noise band behind every query."""
        answered = {question: result_unless_cancelled(vector) for question, vector in vectors.items()}
        if all(vector is not None for vector in answered.values()):
            self.post_message(ControlsEmbedded({q: v for q, v in answered.items() if v is not None}))

    @work(thread=True, exclusive=True, group="languages", exit_on_error=False, description="languages")
    def load_language_identifier(
        self, model: str | None, embedder_factory: str | None, cache_dir: Path | None
    ) -> None:
        """Load the language identifier (over its tables in ``cache_dir``, unpacked there the first
        time, ~0.7 s), which says when a question's noise verdict means nothing; until it is loaded,
        rankings go without the language check rather than wait. Not loaded for a model whose
        languages are not known (nothing to check against)."""
        from raglens.diagnostics.question_language import checks_language, keep_tables_in, load_identifier
        from raglens.model_languages import languages_of

        if not checks_language(languages_of(model, embedder_factory)):
            return
        keep_tables_in(cache_dir)
        try:
            load_identifier()
        except Exception as error:  # a damaged install: the explorer works without the check
            self.post_message(LanguageIdentifierReady(f"{type(error).__name__}: {error}"))
            return
        self.post_message(LanguageIdentifierReady())

    @while_shown
    def on_language_identifier_ready(self, message: LanguageIdentifierReady) -> None:
        if message.error is not None:
            self.narrate(f"no language check: the identifier did not load ({message.error})")
            return
        self.rerank(now=True)  # the question on screen may be in a language the model does not read

    def ask_control_questions(self) -> None:
        """Embed the off-topic control questions once per model, for the noise band behind every query.

        Not for BM25: its scores have no fixed scale for an off-topic band to be measured on.
        """
        process = self.a.process
        if process is None or self.a.lexical:
            return
        self._controls.clear()
        self._controls_asked_of = self.a.incarnation
        self.embed_controls({question: process.embed_query(question) for question in CONTROL_QUESTIONS})

    @while_shown
    def on_controls_embedded(self, message: ControlsEmbedded) -> None:
        self._controls = dict(message.vectors)
        self.rerank(now=True)  # the noise band is complete: draw it

    def vectors_arrived(self, vectors: np.ndarray, *, in_view: bool, cache_replied: bool) -> None:
        """A's index grew by ``vectors`` (some of the file in view, if ``in_view``): rank again soon
        where they could change what is shown, else at the slower pace that keeps the histogram and
        the count ranked moving. ``cache_replied``: they were the last the cache found.

        Ranking and drawing every batch took a quarter of a core from the embedding process. While
        the cache's vectors arrive, nothing is ranked: on a warm start at 100k windows, a ranking of
        90k of them (0.3 s) ran first and the ranking of all of them waited for it.
        """
        if self.a.is_complete or cache_replied:
            self.rerank(now=True)
        elif self.a.cache_replying:
            return  # rerank would wait too: no need to ask whether these could change what is shown
        elif (self.heat_on and in_view) or self.could_change_shown(vectors):
            self.rerank(now=False)
        else:
            self.rerank(now=False, within=SETTLED_RERANK_INTERVAL_S)

    def could_change_shown(self, vectors: np.ndarray) -> bool:
        """Whether ``vectors`` could change what is shown: enter the hits, raise a control question's
        best, or move a rank shown below the hits."""
        from raglens.search import may_reach  # numpy is loaded by the relay that brought them

        question, result, diagnostics = self.a.question, self.last_result, self.last_diagnostics
        if question is None or question is not self.shown_question or result is None or not result.cosine:
            return True  # nothing of this question is on screen yet, or BM25 (indexed whole)
        if not result.is_of(self.a.windows):
            return True  # the hits on screen are of the window set before a re-scan or re-cut
        if diagnostics is None or not question.vector.done() or question.vector.exception() is not None:
            return True
        if diagnostics.expected or diagnostics.identifier is not None or self.b is not None:
            return True  # ranks below the hits are on screen, and any window may move them
        least_kept = result.hits[-1].score if len(result.hits) >= self.k else None
        if may_reach(vectors, question.vector.result(), least_kept):
            return True
        noise = diagnostics.noise
        if noise is None:
            return bool(self._controls)  # the band was not drawn; with its vectors here, it can be
        best = {control.question: control.top_score for control in noise.controls}
        return any(may_reach(vectors, vector, best.get(name)) for name, vector in self._controls.items())

    def rerank(self, now: bool, within: float = RERANK_INTERVAL_S) -> None:
        """Rank the question asked again: at once, or within ``within`` seconds while embedding.

        The question's text and vector travel together: a ranking is always of the question asked,
        never of a vector under the text now in the box.
        """
        question, index = self.a.question, self.a.index
        if question is None or index is None or self.corpus is None or index.embedded_count == 0:
            return
        if self.a.cache_replying:
            return  # the last of the cache's vectors ranks (vectors_arrived): any sooner is thrown away
        if self._asked is None or question.number != self._asked[0]:
            return  # asked of a process that died: the new one is asked when it is ready
        if now:
            if self._rerank_timer is not None:
                self._rerank_timer.stop()  # this ranking covers whatever the timer was waiting for
                self._rerank_timer = None
            if self._ranking is not None and self._ranking[0] == question.number:
                # Same question, more to rank with: let the running ranking reach the screen first
                # (cancelling it would throw its work away), then rank again.
                self._rank_again = True
                return
            pinned = self.pins.for_question(question.text) if self.pins is not None else {}
            worker = self.rank_query(
                index.snapshot(),
                self.corpus,
                question,
                self.k,
                dict(self._controls),
                pinned,
                (self.a.config.model, self.config.engine.embedder_factory),
            )
            self._ranking = (question.number, worker)
        elif self._rerank_timer is None or self._rerank_due > time.monotonic() + within:
            if self._rerank_timer is not None:
                self._rerank_timer.stop()  # a slower one was waiting: this one comes first
            self._rerank_due = time.monotonic() + within
            self._rerank_timer = self.set_timer(within, self._rerank_later)

    def _rerank_later(self) -> None:
        self._rerank_timer = None
        self.rerank(now=True)

    async def on_ranking_ready(self, message: RankingReady) -> None:
        if self._asked is None or message.question != self._asked[0]:
            return  # another question's
        if self.corpus is None or not self.query("#panes"):
            return  # the app is closing
        question = self.a.question
        if question is None or question.number != message.question:
            return
        self.last_result = message.result
        model = self.a.model
        summary = ranked_summary(
            printable(message.query),
            message.result.ranked_count,
            message.result.window_count,
            len(message.result.hits),
            model.precision if model is not None else choose_precision(self.a.config.precision),
            lexical=not message.result.cosine,
        )
        lens_was_drawn = self.lens_drawn
        self.last_diagnostics = message.diagnostics
        strip = self.query_one(ScoreStrip)  # before the await: the app may be closing after it
        pins = self.pins
        strip.show_pins_elsewhere(
            pins.question if pins is not None and pins.question != message.query else None
        )
        strip.show_diagnostics(message.diagnostics, message.result.hits, self.k, message.result.cosine)
        if self.shown_window is not None and (lens_was_drawn or message.diagnostics.straddles):
            self.show_file(*self.shown_window, scroll=False)  # the new lens, or none where one was
        await self.query_one(HitList).show_result(message.result, message.excerpts, summary)
        self.shown_question = question
        if self._first_file is not None:
            self.call_after_refresh(self._open_first_file)  # the hits are painted first
        elif self._following is not None:
            if self.shown_window == self._following and message.result.hits:
                self._follow_top_hit(message.result)
            else:
                self._following = None  # the user went elsewhere: the view is theirs
        self.rank_versus_now()  # B follows A's question

    @on(Input.Changed, "#query")
    def query_changed(self, event: Input.Changed) -> None:
        if self._debounce is not None:
            self._debounce.stop()  # the box's words changed: whatever it held before is not asked
            self._debounce = None
        self._query_text = event.value
        question = self.a.question
        if question is not None and self._asked == (question.number, event.value) and question.is_asked():
            return  # the box holds the question asked (at mount, or typed back): asked already
        self._debounce = self.set_timer(QUERY_DEBOUNCE_S, self.submit_query)

    @on(Input.Submitted, "#query")
    def query_submitted(self, event: Input.Submitted) -> None:
        self._query_text = event.value
        if self._debounce is not None:
            self._debounce.stop()
        self.submit_query()

    def submit_query(self) -> None:
        """Ask the process for the question's vector; the ranking worker waits for it, then ranks."""
        text = self._query_text
        number = (
            self._asked[0] if self._asked is not None and self._asked[1] == text else next(self._questions)
        )
        if self._asked is not None and self._asked[0] != number:
            self._following = None  # another question: the view follows only the launch question's
        self._asked = (number, text)
        hits = self.query_one(HitList)
        if not text.strip():
            lens_was_drawn = self.lens_drawn
            self.last_result, self.last_diagnostics = None, None  # no question: nothing said of one
            if self.shown_window is not None and lens_was_drawn:
                self.show_file(*self.shown_window, scroll=False)
            self.query_one(ScoreStrip).clear()
            self.run_worker(hits.clear_hits(Text("type a question above", style="dim")), group="hits")
            return
        if self.a.stopped:
            hits.show_summary(
                Text("the embedding process is stopped: a new question cannot be embedded (r)", style="red")
            )
            return
        if self.a.ask(number, text) is None or self.a.model is None:
            hits.show_summary(Text("waiting for the model to load before ranking…", style="yellow"))
        self.rerank(now=True)

    def open_case(self, query: str, expect: Sequence[str]) -> None:
        """Ask ``query`` now with ``expect`` (golden refs) pinned as its answer, as a golden case has
        them; a ref this corpus no longer has is said, and the question asked without it."""
        if self.corpus is None:
            return
        self.pins = None
        self.pin_refs(query, expect)
        self._query_text = query
        self.query_one("#query", Input).value = query  # its Changed event finds the question asked
        self.submit_query()

    def ask_launch_question(self) -> None:
        """At mount: ask the question the explorer was started with, and the control questions.

        The control questions are asked now, like the question: answered before the cached vectors
        arrive, so the first ranking draws the noise band at once instead of painting twice.
        """
        if self._query_text.strip():
            self.submit_query()
        self.ask_control_questions()
        model = (self.a.config.model, self.config.engine.embedder_factory)
        # After the first frame: numpy.
        self.call_after_refresh(self.load_language_identifier, *model, self.cache_dir)

    def ask_again(self) -> None:
        """A's engine (re)opened: ask what its process was not asked, or asked and lost."""
        if self._query_text.strip():
            # Not asked before the model was ready, asked while the process was stopped, or lost with
            # a process that died: asked now (a vector that did come is kept), then ranked.
            self.submit_query()
        wanted = not self.a.lexical and len(self._controls) < len(CONTROL_QUESTIONS)
        if wanted and self._controls_asked_of != self.a.incarnation:
            self.ask_control_questions()  # they were asked of a process that ended before answering

    def open_first_file(self, first: str) -> None:
        """Open the corpus's first file: now, or, launched with a question, once its hits are drawn."""
        if self._query_text.strip() and self.shown_question is None:
            self._first_file = first
            self.set_timer(FIRST_FILE_WAIT_S, self._open_first_file)
        else:
            self.show_file(first, 0)

    @property
    def first_file_pending(self) -> bool:
        """Whether the first file still waits for the launch question's hits (start-up is not over)."""
        return self._first_file is not None

    def _open_first_file(self) -> None:
        """Open what start-up put off, unless a file was opened meanwhile: the launch question's top
        hit at its window once its hits are drawn, else (no hits in time) the corpus's first file."""
        path, self._first_file = self._first_file, None
        if path is None or self.shown_window is not None:
            return
        result = self.last_result
        if result is not None and result.hits:
            self._follow_top_hit(result)
        elif path in self.a.file_rows:
            self.show_file(path, 0)
            if self._query_text.strip():
                self._following = self.shown_window  # no hits yet: the top hit replaces it when they come

    def stop_following_top_hit(self) -> None:
        """The user opened or stepped to a window: from now on the view is theirs."""
        self._following = None

    def _follow_top_hit(self, result: SearchResult) -> None:
        """Show the launch question's top hit, and keep showing the top hit as more windows rank,
        until the user opens or steps to another window (a partial ranking's top is seldom the last)."""
        top = result.hits[0].window
        if (top.path, top.index) != self.shown_window:
            self.show_file(top.path, top.index)
        self._following = self.shown_window

    def ranking_ended(self, worker: Worker[None]) -> None:
        """A worker ended: if it was the ranking, rank once more if more came meanwhile, else run what
        waited for it."""
        if self._ranking is not None and worker is self._ranking[1]:
            self._ranking = None
            if self._rank_again:
                self._rank_again = False
                self.rerank(now=True)
            if self._ranking is None:
                steps, self._after_ranking = self._after_ranking, []
                for step in steps:
                    step()

    def when_ranked(self, step: Callable[[], object]) -> None:
        """Run ``step`` now, or once the ranking in progress has ended when one is.

        For work that can wait beside the hits: measured at 100k windows, the coverage's worker
        (~0.4 s) held the GIL beside the ranking of a complete index, which took 0.54 s, not 0.16 s.
        """
        if self._ranking is None:
            step()
        else:
            self._after_ranking.append(step)
