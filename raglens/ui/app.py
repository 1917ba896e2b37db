"""The raglens explorer: corpus tree, window view, live query and hits over a background index."""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape as escape_markup
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, ProgressBar, Static
from textual.worker import Worker, WorkerState, get_current_worker

from raglens.corpus import Corpus, CorpusOptions, load_corpus
from raglens.diagnostics.control_questions import CONTROL_QUESTIONS
from raglens.embedding_events import (
    CacheLookedUp,
    CacheTrouble,
    ModelFailed,
    ModelReady,
    ProcessEnded,
    QueryEmbedded,
    VectorsEmbedded,
    WindowsDone,
)
from raglens.embedding_process import EmbeddingProcess
from raglens.errors import RaglensError
from raglens.precision import choose_precision, precision_note, read_cpu_features
from raglens.printable import printable, printable_name
from raglens.process_restarts import describe_exit
from raglens.run import ConfigurationRun, ProcessOutcome, Question
from raglens.ui.app_config import AppConfig
from raglens.ui.error_log import write_error_log
from raglens.ui.futures import result_unless_cancelled
from raglens.ui.grid_actions import GridActions
from raglens.ui.highlight import warm_up
from raglens.ui.lab_actions import LabActions
from raglens.ui.messages import (
    ControlsEmbedded,
    CorpusFailed,
    CorpusLoaded,
    RankingReady,
    RunEvent,
    WindowsCut,
    while_shown,
)
from raglens.ui.navigation import NARROW_BELOW, Navigation
from raglens.ui.screens.help import HelpScreen
from raglens.ui.screens.settings import Settings, SettingsScreen
from raglens.ui.status import ranked_summary, status_text
from raglens.ui.terminal_watch import watch_terminal
from raglens.ui.versus_actions import VersusActions
from raglens.ui.widgets.corpus_tree import CorpusTree
from raglens.ui.widgets.hit_list import HitList
from raglens.ui.widgets.pipeline_log import PipelineLog
from raglens.ui.widgets.score_strip import ScoreStrip
from raglens.ui.widgets.versus_hits import VersusHits
from raglens.ui.widgets.window_view import WindowView
from raglens.windows import WindowParams

if sys.version_info >= (3, 11):
    from typing import assert_never
else:  # textual depends on typing_extensions
    from typing_extensions import assert_never

if TYPE_CHECKING:
    # numpy and the modules built on it load in the workers, off the UI thread: importing them
    # here would hold back the first frame by ~0.1 s (see benchmarks/app_responsiveness.py).
    from concurrent.futures import Future

    import numpy as np

    from raglens.diagnostics.golden import ExpectedRef
    from raglens.diagnostics.query_report import QueryDiagnostics
    from raglens.diagnostics.symbols import Definition
    from raglens.index import IndexSnapshot, VectorIndex
    from raglens.search import SearchResult

TERMINATED_EXIT_CODE = 143
"""What the explorer exits with after SIGTERM, as a shell reports a terminated process."""
HANGUP_EXIT_CODE = 129
"""What the explorer exits with when its terminal hangs up (SIGHUP), as a shell reports it."""
SHUTDOWN_GRACE_S = 2.0
"""How long a shutdown may take before a watchdog ends the process."""


def end_after(seconds: float, exit_code: int) -> None:
    """End the process with ``exit_code`` in ``seconds`` unless it has ended by then (a daemon timer)."""
    timer = threading.Timer(seconds, os._exit, (exit_code,))
    timer.daemon = True
    timer.start()


QUERY_DEBOUNCE_S = 0.2
RERANK_INTERVAL_S = 0.5
"""While windows stream in, a standing query is re-ranked at most this often."""
FIRST_FILE_WAIT_S = 1.0
"""Launched with a question, the first file opens after its hits are drawn, or after this long."""


class RaglensApp(Navigation, LabActions, VersusActions, GridActions):
    """Runs rung-1 naive RAG on one folder and shows every step of it."""

    CSS_PATH = "raglens.tcss"
    TITLE = "raglens"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_BELOW, "-wide")]
    """Below NARROW_BELOW columns the corpus pane folds away (t shows it), so the window view and
    the hits keep room for a line of code and the score strip."""
    BINDINGS = [
        Binding("slash", "focus_query", "query"),
        Binding("t", "focus_tree", "files"),
        Binding("n", "next_window", "next"),
        Binding("p", "previous_window", "prev"),
        Binding("plus,equals_sign", "change_k(1)", "k+1", show=False),
        Binding("minus", "change_k(-1)", "k-1", show=False),
        Binding("w", "settings", "windows"),
        Binding("r", "rescan", "re-scan"),
        Binding("h", "focus_hits", "hits", show=False),
        Binding("e", "expand_hit", "expand hit", show=False),
        Binding("l", "toggle_log", "log"),
        Binding("m", "toggle_heat", "heat"),
        Binding("s", "toggle_wrap", "wrap", show=False),
        Binding("a", "pin_answer", "pin answer"),
        Binding("u", "unpin", "unpin", show=False),
        Binding("g", "save_case", "save case", show=False),
        Binding("c", "prompt_preview", "prompt"),
        Binding("f", "failure_lab", "failure lab"),
        Binding("v", "versus", "versus"),
        Binding("o", "versus_overlay", "B's grid", show=False),
        Binding("x", "eval_grid", "eval grid", show=False),
        Binding("question_mark,f1", "help", "help"),
        Binding("escape", "leave_query", "letter keys"),
        Binding("q", "quit", "quit"),
        # Ctrl+C quits at once, as in any command, even from the question box (over its "copy").
        Binding("ctrl+c", "quit", "quit", show=False, priority=True),
    ]

    def __init__(self, config: AppConfig, process: EmbeddingProcess | None = None) -> None:
        """``process`` is an embedding process already started for ``config`` (the CLI starts it before
        importing Textual, so the model opens while the app loads); None starts one at mount."""
        super().__init__()
        self.config = config
        self.k = config.k
        self.run_ids = itertools.count(1)
        """Each configuration run gets the next id; a replaced run's late events name an id no run has."""
        self.a = ConfigurationRun(next(self.run_ids), config.retrieval, config.engine, process)
        """Configuration A: the one the explorer was started with (w changes its windows)."""
        self.corpus: Corpus | None = None
        """The corpus being shown, once read."""
        self.last_result: SearchResult | None = None
        self.last_diagnostics: QueryDiagnostics | None = None
        """What the instruments said about ``last_result``."""
        self.shown_question: Question | None = None
        """The question whose hits are on screen (``last_result``'s, once its hits are drawn)."""
        self._query_text = config.query
        """The question box's text: asked once the user stops typing (or presses Enter)."""
        self._questions = itertools.count(1)
        self._asked: tuple[int, str] | None = None
        """The question asked last, by number: rankings of any other are not drawn."""
        self._first_file: str | None = None
        """The file to open once the launch question's hits are drawn: painting a whole file first
        took ~0.1 s of the UI thread that the first hits waited for."""
        self._debounce: Timer | None = None
        self._rerank_timer: Timer | None = None
        self._ranking: tuple[int, Worker[None]] | None = None
        """The question a ranking worker is ranking now, and that worker."""
        self._rank_again = False
        """More vectors or the noise band came while ``_ranking`` ran: rank once more when it ends."""
        self._signals: list[int] = []
        """The signals whose handlers this app installed, removed again when it closes."""
        self._controls: dict[str, np.ndarray] = {}
        """The vectors of the off-topic control questions, whose best scores make the noise band."""
        self._controls_asked_of = 0
        """The incarnation of A's process the control questions were last asked of (once each)."""

    @property
    def shown_query(self) -> str | None:
        """The text of the question whose hits are on screen."""
        return self.shown_question.text if self.shown_question is not None else None

    @property
    def index(self) -> VectorIndex | None:
        """A's index."""
        return self.a.index

    def compose(self) -> ComposeResult:
        with Horizontal(id="panes"):
            with Vertical(id="left"):
                yield CorpusTree(id="corpus-tree")
                yield PipelineLog(id="pipeline-log")
            yield WindowView(id="window-view")
            with Vertical(id="right"):
                yield Input(value=self.config.query, placeholder="ask a question of the corpus…", id="query")
                with VerticalScroll(id="strip-scroll"):
                    yield ScoreStrip(id="score-strip")
                yield HitList(id="hit-list")
                with VerticalScroll(id="versus-scroll"):
                    yield VersusHits(id="versus-hits")
        with Horizontal(id="status-row"):
            yield Static(id="status")
            yield ProgressBar(total=None, show_eta=False, id="progress")
        yield Footer()

    def on_mount(self) -> None:
        self._narrate(f"reading {self.config.path}")
        self._handle_termination()
        self.a.start()  # before the first frame: the engine opens while Textual paints
        self._refresh_status()
        self.query_one("#query", Input).focus()
        # Reading the corpus is mostly file I/O and imports nothing heavy: it starts with the first paint.
        self.read_corpus(self.a.config.params)
        if self._query_text.strip():
            self._submit_query()
        # Asked now, like the question: answered before the cached vectors arrive, so the first
        # ranking draws the noise band at once instead of ranking and painting a second time.
        self._ask_control_questions()
        self._narrate(f"loading {self.a.choice.label} in a separate process")
        # At once: a warm model is ready ~0.3 s after its process starts, and its events wait on the
        # relay's import of numpy (~0.1 s); started after the first paint, that import competed with
        # the first file's paint and the cached vectors waited 0.12-0.3 s.
        self.relay_events(self.a)
        self.call_after_refresh(self._settle_heap)

    def _handle_termination(self) -> None:
        """On SIGTERM, exit as if the user quit, within SHUTDOWN_GRACE_S; on SIGHUP, at once.

        Without this, Python's default handling kills the app mid-frame and leaves the terminal in
        the alternate screen with mouse reporting on.
        """
        import asyncio
        import signal

        loop = asyncio.get_running_loop()
        output = sys.__stdout__.fileno() if sys.__stdout__ is not None else -1
        if not self.is_headless and output >= 0 and os.isatty(output):
            watch_terminal(output, self._hang_up)  # a terminal closed without SIGHUP: reads fail with EIO
        handlers = {signal.SIGTERM: self._terminate, signal.SIGHUP: self._hang_up}
        for number, handler in handlers.items():
            # Not possible off the main thread, or on a platform without these signals.
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(number, handler)
                self._signals.append(number)

    def _terminate(self) -> None:
        """Quit as ``q`` does (the terminal is restored); a watchdog ends the process if that hangs."""
        end_after(SHUTDOWN_GRACE_S, TERMINATED_EXIT_CODE)
        self.exit(None, TERMINATED_EXIT_CODE)

    def _hang_up(self) -> None:
        """The terminal is gone: stop the embedding processes and end now, writing nothing to it.

        Called on SIGHUP by the event loop, or by the terminal watcher's thread when the terminal
        closed without a SIGHUP; either way the process ends here.

        A graceful exit writes to the dead terminal, and Textual's writer thread then never drains
        its queue: 11 of 15 closed terminals left raglens running forever. The cache stays whole:
        the embedding process commits each batch in its own transaction.
        """
        self._close_runs(SHUTDOWN_GRACE_S / 2)
        os._exit(HANGUP_EXIT_CODE)

    def _close_runs(self, timeout: float) -> None:
        """End every configuration's process and the eval grid's child."""
        for run in self.runs():
            run.close(timeout=timeout)
        self.b = None
        self.stop_grid()

    def _settle_heap(self) -> None:
        """Exempt the objects alive now (Textual's, the corpus's) from the cyclic garbage collector.

        A full collection over them stalled the event loop for 40-50 ms in the middle of indexing
        (measured with benchmarks/app_responsiveness.py); frozen objects are not scanned again.
        """
        gc.freeze()

    def on_unmount(self) -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        for number in self._signals:
            loop.remove_signal_handler(number)
        self._close_runs(2)

    def runs(self) -> tuple[ConfigurationRun, ...]:
        """Every configuration being shown: A, and B while one is compared."""
        return (self.a,) if self.b is None else (self.a, self.b)

    def _run(self, run_id: int) -> ConfigurationRun | None:
        return next((run for run in self.runs() if run.run_id == run_id), None)

    def _prefix(self, run: ConfigurationRun) -> str:
        """How the log names a run's lines: A's plainly, B's with ``B: ``."""
        return "" if run is self.a else "B: "

    # Workers: each wraps one core call and only posts messages.

    @work(thread=True, exclusive=True, group="corpus", exit_on_error=False, description="reading the corpus")
    def read_corpus(self, params: WindowParams) -> None:
        from raglens.windows import cut_corpus, window_texts

        try:
            corpus = load_corpus(self.config.path, CorpusOptions(max_file_bytes=self.config.max_file_bytes))
        except RaglensError as error:
            self.post_message(CorpusFailed(error))
            return
        windows = cut_corpus(corpus, params)
        self.post_message(CorpusLoaded(corpus, params))
        self.post_message(WindowsCut(self.a.run_id, params, corpus, windows, window_texts(corpus, windows)))
        # Then Pygments and the corpus's lexers (~50 ms), here: the first ranking needs them, and a
        # warm model's cached vectors arrive ~0.1 s after the corpus.
        warm_up([source.path for source in corpus.files])

    @work(thread=True, group="embedder", exit_on_error=False, description="embedding process")
    def relay_events(self, run: ConfigurationRun) -> None:
        """Post each event of the run's current process, until the process ends.

        numpy is imported here first, by this thread alone, before any event can need it: the index
        the UI thread builds on ModelReady, the vectors this thread unpickles. Two threads importing
        numpy at once can leave one of them a half-initialised module. The ranking's own modules
        follow (~30 ms), while the model still loads, so that the first ranking imports nothing.
        """
        import raglens.index
        import raglens.ui.ranking  # noqa: F401

        process, incarnation = run.process, run.incarnation
        if process is None:
            return
        worker = get_current_worker()
        for event in process.events(lambda: worker.is_cancelled):
            self.post_message(RunEvent(run.run_id, incarnation, event))

    @work(thread=True, exclusive=True, group="rank", exit_on_error=False, description="ranking")
    def rank_query(
        self,
        index: IndexSnapshot,
        corpus: Corpus,
        question: Question,
        k: int,
        controls: dict[str, np.ndarray],
        pinned: dict[ExpectedRef, tuple[Definition, ...]],
    ) -> None:
        from raglens.ui.ranking import rank_for_display  # numpy and Pygments: loaded in workers only

        query_vector = result_unless_cancelled(question.vector)
        if query_vector is None:
            return
        shown = rank_for_display(index, corpus, question.text, query_vector, k, controls, pinned)
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

    # Handlers own the state.

    @while_shown
    def on_corpus_loaded(self, message: CorpusLoaded) -> None:
        if message.params != self.a.config.params:
            return  # superseded by newer settings
        self.corpus = message.corpus
        corpus = message.corpus
        self._narrate(f"found {len(corpus.files)} file(s) to index, skipped {len(corpus.skipped)}")
        self.versus_corpus_changed(corpus)
        self.call_after_refresh(self._settle_heap)

    @while_shown
    def on_windows_cut(self, message: WindowsCut) -> None:
        run = self._run(message.run_id)
        if run is None or message.params != run.config.params:
            return  # a configuration replaced since, or superseded by newer settings
        first = run.file_rows.get(self.shown_window[0], range(0)) if self.shown_window is not None else ()
        run.set_windows(message.corpus, message.windows, message.texts, first)
        self._narrate(
            f"{self._prefix(run)}cut into {len(message.windows)} window(s) of {message.params.describe()}"
        )
        if run is self.a:
            self._a_windows_cut(message.corpus)
        else:
            self.versus_windows_cut()

    def _a_windows_cut(self, corpus: Corpus) -> None:
        counts = {path: len(rows) for path, rows in self.a.file_rows.items()}
        self.query_one(CorpusTree).show_corpus(corpus, counts)
        self._refresh_status()
        # Redraw the shown file with the new grid (or open the first file on the first load).
        if self.shown_window is not None and self.shown_window[0] in self.a.file_rows:
            self.show_file(*self.shown_window)
        elif corpus.files:
            first = corpus.files[0].path
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
        """Open the file put off at start-up, unless a file was opened meanwhile."""
        path, self._first_file = self._first_file, None
        if path is not None and self.shown_window is None and path in self.a.file_rows:
            self.show_file(path, 0)

    @while_shown
    def on_corpus_failed(self, message: CorpusFailed) -> None:
        self._narrate(f"error: {message.error}")
        self.notify(str(message.error), title="cannot index", severity="error", timeout=30, markup=False)
        self.query_one(WindowView).show_message("nothing to show", str(message.error))

    @while_shown
    def on_run_event(self, message: RunEvent) -> None:
        """One event of a configuration's process: the run keeps the state, this draws it."""
        run = self._run(message.run_id)
        if run is None:
            return  # a configuration replaced since
        prefix, event = self._prefix(run), message.event
        match event:
            case ModelReady():
                run.model_ready(event)
                limit = event.max_seq_length or "all"
                reads = f"{event.dimension} dimensions, reads at most {limit} tokens"
                self._narrate(f"{prefix}model {event.describe()}: {reads}")
                note = precision_note(event.precision, event.device == "cpu", read_cpu_features())
                if note is not None:
                    self._narrate(prefix + note)
                    title = "approximate scores" + (" (B)" if prefix else "")
                    self.notify(note, title=title, severity="warning", timeout=20, markup=False)
                self._ask_again(run)
            case ModelFailed():
                run.model_failed(event.message)
                self._narrate(f"{prefix}error: {event.message}")
                title = "the model failed" if run is self.a else "configuration B's model failed"
                self.notify(printable(event.message), title=title, severity="error", timeout=60, markup=False)
            case CacheLookedUp():
                if run.cache_looked_up(event):
                    from raglens.pipeline_steps import VectorsFromCache  # values only: no pipeline here

                    self._narrate(
                        prefix + VectorsFromCache(event.found, event.total, event.oldest).describe()
                    )
            case VectorsEmbedded():
                if run.vectors_arrived(event):
                    self._vectors_arrived(run, event.rows)
            case WindowsDone():
                if run.windows_done(event):
                    self._window_set_done(run)
            case CacheTrouble():
                self._narrate(f"{prefix}cache: {event.message}")
                self.notify(event.message, title="vector cache", severity="warning", timeout=20, markup=False)
            case ProcessEnded():
                self._process_ended(run, message.incarnation, event)
            case QueryEmbedded():
                pass  # the process handle resolves the query's future; the relay never sees one
            case _:
                assert_never(event)
        self._run_changed(run)

    def _run_changed(self, run: ConfigurationRun) -> None:
        """Draw what a run's state says: A's status line, or B's pane."""
        if run is self.a:
            self._refresh_status()
        else:
            self.show_versus()

    def _ask_again(self, run: ConfigurationRun) -> None:
        """A (re)opened engine: ask what its process was not asked, or asked and lost."""
        if run is not self.a:
            self.rank_versus_now()
            return
        if self._query_text.strip():
            # Not asked before the model was ready, asked while the process was stopped, or lost with
            # a process that died: asked now (a vector that did come is kept), then ranked.
            self._submit_query()
        if len(self._controls) < len(CONTROL_QUESTIONS) and self._controls_asked_of != self.a.incarnation:
            self._ask_control_questions()  # they were asked of a process that ended before answering

    def _vectors_arrived(self, run: ConfigurationRun, rows: tuple[int, ...]) -> None:
        if run is not self.a:
            self.versus_vectors_arrived()
            return
        path, current = self.shown_window or ("", None)
        if current is not None and not set(rows).isdisjoint(self.a.file_rows[path]):
            self.show_file(path, current, scroll=False)  # token counts and read limits just arrived
        self._rerank(now=self.a.is_complete)

    def _window_set_done(self, run: ConfigurationRun) -> None:
        index = run.index
        assert index is not None
        prefix = self._prefix(run)
        embedded = index.window_count - run.from_cache
        self._narrate(f"{prefix}index ready: {index.window_count} vector(s), {embedded} embedded")
        if run is self.a:
            self._narrate_coverage(index)
        else:
            self.rank_versus_now()

    def _narrate_coverage(self, index: VectorIndex) -> None:
        """Say in the log how much of the corpus the model never reads, once every extent is known."""
        from raglens.diagnostics.coverage import corpus_coverage  # numpy is loaded by now
        from raglens.diagnostics.describe import describe_coverage

        extents = [index.extent(row) for row in range(index.window_count)]
        known = [extent for extent in extents if extent is not None]
        if self.corpus is None or len(known) != len(extents):
            return
        lengths = {source.path: len(source.text) for source in self.corpus.files}
        limit = self.a.model.max_seq_length if self.a.model is not None else None
        self._narrate(describe_coverage(corpus_coverage(lengths, index.windows, known, limit)))

    def _process_ended(self, run: ConfigurationRun, incarnation: int, event: ProcessEnded) -> None:
        """A process died under the app: its run starts another (the cache holds what it embedded)
        and hits keep ranking what is embedded; after RESTART_LIMIT deaths a minute, it stops trying."""
        if not self.is_running:
            return  # the app is closing
        outcome = run.process_ended(incarnation)
        name = "The embedding process" if run is self.a else "B's embedding process"
        how = describe_exit(event.exit_code)
        prefix = self._prefix(run)
        embedded = run.embedded_count
        match outcome:
            case ProcessOutcome.ALREADY_REPLACED | ProcessOutcome.MODEL_FAILED:
                return
            case ProcessOutcome.RESTARTED:
                self._narrate(f"{prefix}the embedding process ended ({how}); starting it again")
                self.notify(
                    f"{name} ended ({how}). Starting it again; meanwhile hits rank the "
                    f"{embedded:,} window(s) embedded so far.",
                    title="embedding process",
                    severity="warning",
                    timeout=20,
                    markup=False,
                )
                self.relay_events(run)
            case ProcessOutcome.GAVE_UP:
                self._narrate(f"{prefix}the embedding process ended ({how}) again; not starting it again")
                again = "r (re-scan) tries again" if run is self.a else "v starts B again"
                self.notify(
                    f"{name} ended ({how}) {run.restarts.limit} times within a minute, so "
                    f"raglens stopped starting it. Hits rank the {embedded:,} window(s) embedded; a new "
                    f"question cannot be embedded. {again}; the log file says more.",
                    title="embedding process stopped",
                    severity="error",
                    timeout=60,
                    markup=False,
                )
            case _:
                assert_never(outcome)

    def _ask_control_questions(self) -> None:
        """Embed the off-topic control questions once per model, for the noise band behind every query."""
        process = self.a.process
        if process is None:
            return
        self._controls.clear()
        self._controls_asked_of = self.a.incarnation
        self.embed_controls({question: process.embed_query(question) for question in CONTROL_QUESTIONS})

    @while_shown
    def on_controls_embedded(self, message: ControlsEmbedded) -> None:
        self._controls = dict(message.vectors)
        self._rerank(now=True)  # the noise band is complete: draw it

    def _rerank(self, now: bool) -> None:
        """Rank the question asked again: at once, or at most every RERANK_INTERVAL_S while embedding.

        The question's text and vector travel together: a ranking is always of the question asked,
        never of a vector under the text now in the box.
        """
        question, index = self.a.question, self.a.index
        if question is None or index is None or self.corpus is None or index.embedded_count == 0:
            return
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
            worker = self.rank_query(
                index.snapshot(), self.corpus, question, self.k, dict(self._controls), dict(self.pinned)
            )
            self._ranking = (question.number, worker)
        elif self._rerank_timer is None:
            self._rerank_timer = self.set_timer(RERANK_INTERVAL_S, self._rerank_later)

    def rerank_now(self) -> None:
        self._rerank(now=True)

    def golden_path(self) -> Path:
        """Where ``g`` appends golden cases: ``--golden``, else a file per corpus in the user data folder."""
        from raglens.locations import golden_path_for

        return golden_path_for(self.config.path, self.config.golden_path)

    def model_name_for_tokens(self) -> str | None:
        return self.a.config.model

    def model_label(self) -> str:
        return self.a.model_label()

    def _rerank_later(self) -> None:
        self._rerank_timer = None
        self._rerank(now=True)

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
        )
        self.last_diagnostics = message.diagnostics
        strip = self.query_one(ScoreStrip)  # before the await: the app may be closing after it
        strip.show_diagnostics(message.diagnostics, message.result.hits, self.k)
        if self.shown_window is not None and (self.heat_on or message.diagnostics.straddles):
            self.show_file(*self.shown_window, scroll=False)
        await self.query_one(HitList).show_result(message.result, message.excerpts, summary)
        self.shown_question = question
        if self._first_file is not None:
            self.call_after_refresh(self._open_first_file)  # the hits are painted first
        self.rank_versus_now()  # B follows A's question

    @on(Input.Changed, "#query")
    def query_changed(self, event: Input.Changed) -> None:
        if self._asked is not None and event.value == self._asked[1]:
            question = self.a.question
            if question is not None and question.is_asked():
                return  # the box was given the question asked (at mount): it is asked already
        self._query_text = event.value
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(QUERY_DEBOUNCE_S, self._submit_query)

    @on(Input.Submitted, "#query")
    def query_submitted(self, event: Input.Submitted) -> None:
        self._query_text = event.value
        if self._debounce is not None:
            self._debounce.stop()
        self._submit_query()

    def _submit_query(self) -> None:
        """Ask the process for the question's vector; the ranking worker waits for it, then ranks."""
        text = self._query_text
        number = (
            self._asked[0] if self._asked is not None and self._asked[1] == text else next(self._questions)
        )
        self._asked = (number, text)
        hits = self.query_one(HitList)
        if not text.strip():
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
        self._rerank(now=True)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker's exception becomes a notification and a traceback in the log file; the app goes on."""
        if self._ranking is not None and event.worker is self._ranking[1] and event.worker.is_finished:
            self._ranking = None
            if self._rank_again:
                self._rank_again = False
                self._rerank(now=True)
        if event.state is WorkerState.ERROR:
            error = event.worker.error
            self._narrate(f"error in {event.worker.description}: {error}")
            where = ""
            if self.config.error_log_path and error is not None:
                where = f" (details in {self.config.error_log_path})"
                write_error_log(Path(self.config.error_log_path), event.worker.description, error)
            message = printable(f"{event.worker.description} failed: {error}{where}")
            self.notify(message, severity="error", timeout=30, markup=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """In the question box, the footer offers escape (to the letter keys), not ``/``, which types.

        The box has the focus at launch, so a question can be typed at once.
        """
        typing = isinstance(self.focused, Input)
        if action == "leave_query":
            return typing
        if action == "focus_query":
            return not typing
        return True

    def action_rescan(self) -> None:
        """Read the corpus again; with the cache, only windows whose text changed are embedded."""
        if self.a.restart():
            self.relay_events(self.a)
        self._rebuild(self.a.config.params, f"re-scanning {self.config.path}")

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_change_k(self, delta: int) -> None:
        self.apply_settings(Settings(self.a.config.params, max(1, self.k + delta)))

    def action_settings(self) -> None:
        self.push_screen(SettingsScreen(Settings(self.a.config.params, self.k)), self._settings_chosen)

    def _settings_chosen(self, settings: Settings | None) -> None:
        if settings is not None:
            self.apply_settings(settings)

    def apply_settings(self, settings: Settings) -> None:
        """Use new k and window parameters; new parameters rebuild the index in the background."""
        k_changed = settings.k != self.k
        self.k = settings.k
        if settings.params != self.a.config.params:
            self._rebuild(settings.params, f"re-cutting with {settings.params.describe()}")
        elif k_changed:
            self._rerank(now=True)
        self._refresh_status()

    def _rebuild(self, params: WindowParams, narration: str) -> None:
        """Drop A's index and build it again in the background, from a fresh read of the corpus."""
        self.a.recut(params)
        self._narrate(narration)
        self.read_corpus(params)
        self._refresh_status()

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Window settings", "Change unit, size, overlap and k", self.action_settings)
        yield SystemCommand("One more hit", "Increase k by one", lambda: self.action_change_k(1))
        yield SystemCommand("One fewer hit", "Decrease k by one", lambda: self.action_change_k(-1))
        yield SystemCommand(
            "Re-scan the corpus", "Read the files again; embed only what changed", self.action_rescan
        )
        yield SystemCommand("Help", "Keys and what the colours mean", self.action_help)
        if self.corpus is not None:
            for source in self.corpus.files:
                # The palette reads a title as markup: a file named [x=1:2].md crashed it, and one named
                # [@click=app.quit]x.md became a link that quit the app.
                yield SystemCommand(
                    f"Open {escape_markup(printable_name(source.path))}",
                    "Show this file's windows",
                    lambda path=source.path: self.show_file(path, 0),
                )

    # Status.

    def _narrate(self, line: str) -> None:
        self.query_one(PipelineLog).narrate(line)

    def _refresh_status(self) -> None:
        run = self.a
        index = run.index
        embedded = run.embedded_count
        rate = None
        if self.config.show_rates and index and run.embed_started is not None and embedded:
            elapsed = time.monotonic() - run.embed_started
            fresh = embedded - run.from_cache
            rate = fresh / elapsed if elapsed > 0 and fresh > 0 else None
        text = status_text(
            run.model,
            run.choice.label,
            run.config.params,
            self.k,
            embedded,
            run.window_count,
            rate,
            run.from_cache,
        )
        self.query_one("#status", Static).update(text)
        # The bar animates, so deterministic snapshots (no rates) leave it out; the text says the same.
        progress = self.query_one("#progress", ProgressBar)
        progress.display = bool(index and not index.is_complete) and self.config.show_rates
        if index is not None:
            progress.update(total=max(index.window_count, 1), progress=embedded)
