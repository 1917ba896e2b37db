"""The raglens explorer: corpus tree, window view, live query and hits over a background index."""

from __future__ import annotations

import contextlib
import gc
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
from raglens.embedding_events import ModelReady
from raglens.embedding_process import EmbeddingProcess
from raglens.errors import RaglensError
from raglens.precision import choose_precision, precision_note, read_cpu_features
from raglens.printable import printable, printable_name
from raglens.ui.app_config import AppConfig, start_embedding_process
from raglens.ui.error_log import write_error_log
from raglens.ui.futures import result_unless_cancelled
from raglens.ui.grid_actions import GridActions
from raglens.ui.highlight import warm_up
from raglens.ui.lab_actions import LabActions
from raglens.ui.messages import (
    CacheLooked,
    CacheTroubled,
    ControlsEmbedded,
    CorpusFailed,
    CorpusLoaded,
    EmbedderEnded,
    EngineFailed,
    EngineReady,
    RankingReady,
    VectorsArrived,
    WindowSetDone,
    message_for,
    while_shown,
)
from raglens.ui.navigation import NARROW_BELOW, Navigation
from raglens.ui.process_restarts import RestartBudget, describe_exit
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
from raglens.windows import Window, WindowParams, rows_by_file

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
        self.params = config.params
        self.k = config.k
        self.corpus: Corpus | None = None
        """The corpus being shown, once read."""
        self.index: VectorIndex | None = None
        """Every window and the vectors embedded so far; None until the corpus and the model are known."""
        self.model: ModelReady | None = None
        self.last_result: SearchResult | None = None
        self.last_diagnostics: QueryDiagnostics | None = None
        """What the instruments said about ``last_result``."""
        self.shown_query: str | None = None
        """The query whose hits are on screen (``last_result``'s, once its hits are drawn)."""
        self._pending_windows: CorpusLoaded | None = None
        """Windows read and cut, not yet sent to the embedding process."""
        self._windows_without_index: CorpusLoaded | None = None
        """Windows sent to the process whose index waits for the model's dimension (its EngineReady)."""
        self._query_text = config.query
        self._first_file: str | None = None
        """The file to open once the launch question's hits are drawn: painting a whole file first
        took ~0.1 s of the UI thread that the first hits waited for."""
        self._query_vector: Future[np.ndarray] | None = None
        """The vector of ``_query_text`` as the embedding process will give it (or has given it)."""
        self._debounce: Timer | None = None
        self._rerank_timer: Timer | None = None
        self._ranking: tuple[str, Worker[None]] | None = None
        """The query a ranking worker is ranking now, and that worker."""
        self._rank_again = False
        """More vectors or the noise band came while ``_ranking`` ran: rank once more when it ends."""
        self._embed_started: float | None = None
        self._shown: tuple[str, int | None] | None = None
        """The file in the window view and its selected window."""
        self._windows: list[Window] = []
        """Every window of the current parameters, in corpus order (the index's rows once it exists)."""
        self._file_rows: dict[str, range] = {}
        """The rows of each file's windows: contiguous, since windows are cut file by file."""
        self._process: EmbeddingProcess | None = process
        self._indexing_process: EmbeddingProcess | None = None
        """The process the current window set was sent to; another one (a restart) must be sent it again."""
        self._restarts = RestartBudget()
        self._engine_failed = False
        """The process reported a failure of the model (it then ends): it is not restarted for that."""
        self.process_stopped = False
        """True once the embedding process died too often: hits rank what is embedded, nothing more."""
        self._generation = 0
        """Which window set the index belongs to; vectors of an older set are dropped on arrival."""
        self._from_cache = 0
        """How many rows of the current index came from the vector cache."""
        self._signals: list[int] = []
        """The signals whose handlers this app installed, removed again when it closes."""
        self._controls: dict[str, np.ndarray] = {}
        """The vectors of the off-topic control questions, whose best scores make the noise band."""
        self._controls_asked_of: EmbeddingProcess | None = None
        """The process the control questions were last asked of (each process is asked once)."""

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
        if self._process is None:  # before the first frame: the engine opens while Textual paints
            self._process = start_embedding_process(self.config)
        self._refresh_status()
        self.query_one("#query", Input).focus()
        # Reading the corpus is mostly file I/O and imports nothing heavy: it starts with the first paint.
        self.read_corpus(self.params)
        if self._query_text.strip():
            self._submit_query()
        # Asked now, like the question: answered before the cached vectors arrive, so the first
        # ranking draws the noise band at once instead of ranking and painting a second time.
        self._ask_control_questions()
        self._narrate(f"loading {self.config.choice.label} in a separate process")
        # At once: a warm model is ready ~0.3 s after its process starts, and its events wait on the
        # relay's import of numpy (~0.1 s); started after the first paint, that import competed with
        # the first file's paint and the cached vectors waited 0.12-0.3 s.
        self.relay_events(self._process)
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
        """The terminal is gone: stop the embedding process and end now, writing nothing to it.

        Called on SIGHUP by the event loop, or by the terminal watcher's thread when the terminal
        closed without a SIGHUP; either way the process ends here.

        A graceful exit writes to the dead terminal, and Textual's writer thread then never drains
        its queue: 11 of 15 closed terminals left raglens running forever. The cache stays whole:
        the embedding process commits each batch in its own transaction.
        """
        process, self._process = self._process, None
        if process is not None:
            process.close(timeout=SHUTDOWN_GRACE_S / 2)
        versus, self.versus = self.versus, None
        if versus is not None:
            versus.process.close(timeout=SHUTDOWN_GRACE_S / 2)
        self.stop_grid()
        os._exit(HANGUP_EXIT_CODE)

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
        process, self._process = self._process, None
        if process is not None:
            process.close(timeout=2)
        versus, self.versus = self.versus, None
        if versus is not None:
            versus.close()
        self.stop_grid()

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
        self.post_message(CorpusLoaded(corpus, params, windows, window_texts(corpus, windows)))
        # Then Pygments and the corpus's lexers (~50 ms), here: the first ranking needs them, and a
        # warm model's cached vectors arrive ~0.1 s after the corpus.
        warm_up([source.path for source in corpus.files])

    @work(thread=True, group="embedder", exit_on_error=False, description="embedding process")
    def relay_events(self, process: EmbeddingProcess) -> None:
        """Post each event of the embedding process as its own message, until the process ends.

        numpy is imported here first, by this thread alone, before any event can need it: the index
        the UI thread builds on EngineReady, the vectors this thread unpickles. Two threads importing
        numpy at once can leave one of them a half-initialised module. The ranking's own modules
        follow (~30 ms), while the model still loads, so that the first ranking imports nothing.
        """
        import raglens.index
        import raglens.ui.ranking  # noqa: F401

        worker = get_current_worker()
        for event in process.events(lambda: worker.is_cancelled):
            self.post_message(message_for(event))

    @work(thread=True, exclusive=True, group="rank", exit_on_error=False, description="ranking")
    def rank_query(
        self,
        index: IndexSnapshot,
        corpus: Corpus,
        query: str,
        vector: Future[np.ndarray],
        k: int,
        controls: dict[str, np.ndarray],
        pinned: dict[ExpectedRef, tuple[Definition, ...]],
    ) -> None:
        from raglens.ui.ranking import rank_for_display  # numpy and Pygments: loaded in workers only

        query_vector = result_unless_cancelled(vector)
        if query_vector is None:
            return
        shown = rank_for_display(index, corpus, query, query_vector, k, controls, pinned)
        if not get_current_worker().is_cancelled:
            self.post_message(RankingReady(query, shown.result, shown.excerpts, shown.diagnostics))

    @work(thread=True, exclusive=True, group="controls", exit_on_error=False, description="noise floor")
    def embed_controls(self, vectors: dict[str, Future[np.ndarray]]) -> None:
        """Wait for the control questions' vectors, which make the noise band behind every query."""
        answered = {question: result_unless_cancelled(vector) for question, vector in vectors.items()}
        if all(vector is not None for vector in answered.values()):
            self.post_message(ControlsEmbedded({q: v for q, v in answered.items() if v is not None}))

    # Handlers own the state.

    @while_shown
    def on_corpus_loaded(self, message: CorpusLoaded) -> None:
        if message.params != self.params:
            return  # superseded by newer settings
        self.corpus = message.corpus
        self._windows = message.windows
        self._file_rows = rows_by_file(message.windows)
        counts = {path: len(rows) for path, rows in self._file_rows.items()}
        self.query_one(CorpusTree).show_corpus(message.corpus, counts)
        self._narrate(
            f"found {len(message.corpus.files)} file(s) to index, skipped {len(message.corpus.skipped)}"
        )
        self._narrate(f"cut into {len(message.windows)} window(s) of {message.params.describe()}")
        self._pending_windows = message
        self._refresh_status()
        self._start_embedding()
        self.versus_corpus_changed(message.corpus)
        self.call_after_refresh(self._settle_heap)
        # Redraw the shown file with the new grid (or open the first file on the first load).
        if self._shown is not None and self._shown[0] in self._file_rows:
            self.show_file(*self._shown)
        elif message.corpus.files:
            first = message.corpus.files[0].path
            if self._query_text.strip() and self.shown_query is None:
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
        if path is not None and self._shown is None and path in self._file_rows:
            self.show_file(path, 0)

    @while_shown
    def on_corpus_failed(self, message: CorpusFailed) -> None:
        self._narrate(f"error: {message.error}")
        self.notify(str(message.error), title="cannot index", severity="error", timeout=30, markup=False)
        self.query_one(WindowView).show_message("nothing to show", str(message.error))

    def _start_embedding(self) -> None:
        """Send the windows to the process as soon as they are cut, model ready or not.

        The texts go to the process once; it answers from the cache, then embeds the rest, the file
        in view first. Sent before the model is ready, they wait in the pipe, so on a warm start the
        vectors follow the process's EngineReady at once.
        """
        pending = self._pending_windows
        if pending is None or self._process is None:
            return
        self._pending_windows = None
        self._generation += 1
        self._from_cache = 0
        first = self._file_rows.get(self._shown[0], range(0)) if self._shown is not None else range(0)
        self._process.index_windows(self._generation, pending.texts, first)
        self._indexing_process = self._process
        self._embed_started = time.monotonic()
        self._windows_without_index = pending
        self._make_index()

    def _make_index(self) -> None:
        """Build the empty index of the windows sent, once the model's dimension is known."""
        sent = self._windows_without_index
        if sent is None or self.model is None:
            return
        from raglens.index import VectorIndex  # imported by the relay before it posted EngineReady

        self._windows_without_index = None
        index = self.index = VectorIndex(sent.windows, self.model.dimension)
        progress = self.query_one("#progress", ProgressBar)
        progress.update(total=max(len(sent.windows), 1), progress=index.embedded_count)
        self._refresh_status()

    def _narrate_coverage(self, index: VectorIndex) -> None:
        """Say in the log how much of the corpus the model never reads, once every extent is known."""
        from raglens.diagnostics.coverage import corpus_coverage  # numpy is loaded by now
        from raglens.diagnostics.describe import describe_coverage

        extents = [index.extent(row) for row in range(index.window_count)]
        known = [extent for extent in extents if extent is not None]
        if self.corpus is None or len(known) != len(extents):
            return
        lengths = {source.path: len(source.text) for source in self.corpus.files}
        limit = self.model.max_seq_length if self.model is not None else None
        self._narrate(describe_coverage(corpus_coverage(lengths, index.windows, known, limit)))

    @while_shown
    def on_engine_ready(self, message: EngineReady) -> None:
        ready = message.ready
        self.model = ready
        self._narrate(
            f"model {ready.describe()}: {ready.dimension} dimensions, "
            f"reads at most {ready.max_seq_length or 'all'} tokens"
        )
        note = precision_note(ready.precision, ready.device == "cpu", read_cpu_features())
        if note is not None:
            self._narrate(note)
            self.notify(note, title="approximate scores", severity="warning", timeout=20, markup=False)
        self._start_embedding()
        self._resume_embedding()
        self._make_index()
        if self._query_text.strip() and not _asked(self._query_vector):
            self._submit_query()  # not asked before the model was ready, or the process was restarted
        if len(self._controls) < len(CONTROL_QUESTIONS) and self._controls_asked_of is not self._process:
            self._ask_control_questions()  # they were asked of a process that ended before answering
        self._refresh_status()

    @while_shown
    def on_cache_looked(self, message: CacheLooked) -> None:
        from raglens.pipeline_steps import VectorsFromCache  # values only: no pipeline on the UI thread

        event = message.event
        if event.generation != self._generation:
            return
        self._from_cache = event.found
        self._narrate(VectorsFromCache(event.found, event.total, event.oldest).describe())

    @while_shown
    def on_vectors_arrived(self, message: VectorsArrived) -> None:
        event, index = message.event, self.index
        if index is None or event.generation != self._generation:
            return  # vectors of an older window set
        index.fill(event.rows, event.vectors, event.extents)
        self.query_one("#progress", ProgressBar).update(progress=index.embedded_count)
        self._refresh_status()
        path, current = self._shown or ("", None)
        if current is not None and not set(event.rows).isdisjoint(self._file_rows[path]):
            self.show_file(path, current, scroll=False)  # token counts and read limits just arrived
        self._rerank(now=index.is_complete)

    @while_shown
    def on_window_set_done(self, message: WindowSetDone) -> None:
        index = self.index
        if index is None or message.event.generation != self._generation:
            return
        embedded = index.window_count - self._from_cache
        self._narrate(f"index ready: {index.window_count} vector(s), {embedded} embedded")
        self._narrate_coverage(index)
        self._refresh_status()

    @while_shown
    def on_cache_troubled(self, message: CacheTroubled) -> None:
        warning = message.event.message
        self._narrate(f"cache: {warning}")
        self.notify(warning, title="vector cache", severity="warning", timeout=20, markup=False)

    @while_shown
    def on_engine_failed(self, message: EngineFailed) -> None:
        self._engine_failed = True  # said why: the process ends next, and is not started again
        self._narrate(f"error: {message.event.message}")
        self.notify(
            message.event.message, title="the model failed", severity="error", timeout=60, markup=False
        )

    @while_shown
    def on_embedder_ended(self, message: EmbedderEnded) -> None:
        """The process died under the app: start it again (the cache holds what it embedded), and
        keep ranking the windows embedded so far; after RESTART_LIMIT deaths a minute, stop trying."""
        ended = self._process
        if ended is None or ended.is_alive() or not self.is_running:
            return  # the app is closing, or this was a process already replaced
        self._process = None
        ended.close(timeout=1)
        if self._engine_failed:
            self.process_stopped = True  # the model itself failed: starting it again would fail again
            self._refresh_status()
            return
        how = describe_exit(message.event.exit_code)
        embedded = self.index.embedded_count if self.index is not None else 0
        if self._restarts.allow(time.monotonic()):
            self._narrate(f"the embedding process ended ({how}); starting it again")
            self.notify(
                f"The embedding process ended ({how}). Starting it again; meanwhile hits rank the "
                f"{embedded:,} window(s) embedded so far.",
                title="embedding process",
                severity="warning",
                timeout=20,
                markup=False,
            )
            self._start_process()
        else:
            self.process_stopped = True
            self._narrate(f"the embedding process ended ({how}) again; not starting it again")
            self.notify(
                f"The embedding process ended ({how}) {self._restarts.limit} times within a minute, so "
                f"raglens stopped starting it. Hits rank the {embedded:,} window(s) embedded; a new "
                "question cannot be embedded. r (re-scan) tries again; the log file says more.",
                title="embedding process stopped",
                severity="error",
                timeout=60,
                markup=False,
            )
        self._refresh_status()

    def _start_process(self) -> None:
        """Start a new embedding process; its EngineReady resumes indexing and the standing query."""
        self.process_stopped = False
        self._engine_failed = False
        self._process = start_embedding_process(self.config)
        self.relay_events(self._process)

    def _resume_embedding(self) -> None:
        """Send the current window set to a restarted process: it serves what the cache holds
        (everything embedded before the crash) and embeds the rest, the file in view first."""
        index, process = self.index, self._process
        if process is None or self.corpus is None or not self._windows or self._indexing_process is process:
            return
        if index is not None and index.is_complete:
            return
        from raglens.windows import window_texts

        first = self._file_rows.get(self._shown[0], range(0)) if self._shown is not None else range(0)
        process.index_windows(self._generation, window_texts(self.corpus, self._windows), first)
        self._indexing_process = process

    def _ask_control_questions(self) -> None:
        """Embed the off-topic control questions once per model, for the noise band behind every query."""
        if self._process is None:
            return
        self._controls.clear()
        self._controls_asked_of = self._process
        self.embed_controls({question: self._process.embed_query(question) for question in CONTROL_QUESTIONS})

    @while_shown
    def on_controls_embedded(self, message: ControlsEmbedded) -> None:
        self._controls = dict(message.vectors)
        self._rerank(now=True)  # the noise band is complete: draw it

    def _rerank(self, now: bool) -> None:
        """Rank the standing query again: at once, or at most every RERANK_INTERVAL_S while embedding."""
        if self._query_vector is None or self.index is None or self.corpus is None:
            return
        if self.index.embedded_count == 0:
            return
        if now:
            if self._rerank_timer is not None:
                self._rerank_timer.stop()  # this ranking covers whatever the timer was waiting for
                self._rerank_timer = None
            if self._ranking is not None and self._ranking[0] == self._query_text:
                # Same question, more to rank with: let the running ranking reach the screen first
                # (cancelling it would throw its work away), then rank again.
                self._rank_again = True
                return
            worker = self.rank_query(
                self.index.snapshot(),
                self.corpus,
                self._query_text,
                self._query_vector,
                self.k,
                dict(self._controls),
                dict(self.pinned),
            )
            self._ranking = (self._query_text, worker)
        elif self._rerank_timer is None:
            self._rerank_timer = self.set_timer(RERANK_INTERVAL_S, self._rerank_later)

    def rerank_now(self) -> None:
        self._rerank(now=True)

    def golden_path(self) -> Path:
        """Where ``g`` appends golden cases: ``--golden``, else a file per corpus in the user data folder."""
        if self.config.golden_path:
            return Path(self.config.golden_path).expanduser()
        import platformdirs

        name = Path(self.config.path).resolve().name or "corpus"
        return platformdirs.user_data_path("raglens") / "golden" / f"{name}.jsonl"

    def model_name_for_tokens(self) -> str | None:
        return self.config.model

    def model_label(self) -> str:
        return self.model.name if self.model is not None else self.config.choice.label

    def _rerank_later(self) -> None:
        self._rerank_timer = None
        self._rerank(now=True)

    async def on_ranking_ready(self, message: RankingReady) -> None:
        if message.query != self._query_text or self.corpus is None or not self.query("#panes"):
            return  # an older question's, or the app is closing
        self.last_result = message.result
        summary = ranked_summary(
            printable(message.query),
            message.result.ranked_count,
            message.result.window_count,
            len(message.result.hits),
            self.model.precision if self.model is not None else choose_precision(self.config.precision),
        )
        self.last_diagnostics = message.diagnostics
        strip = self.query_one(ScoreStrip)  # before the await: the app may be closing after it
        strip.show_diagnostics(message.diagnostics, message.result.hits, self.k)
        if self._shown is not None and (self.heat_on or message.diagnostics.straddles):
            self.show_file(*self._shown, scroll=False)
        await self.query_one(HitList).show_result(message.result, message.excerpts, summary)
        self.shown_query = message.query
        if self._first_file is not None:
            self.call_after_refresh(self._open_first_file)  # the hits are painted first
        self.rank_versus_now()  # B follows A's question

    @on(Input.Changed, "#query")
    def query_changed(self, event: Input.Changed) -> None:
        if event.value == self._query_text and _asked(self._query_vector):
            return  # the box was given the standing question (at mount): it is asked already
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
        """Ask the process for the query's vector; the ranking worker waits for it, then ranks."""
        self._query_vector = None
        hits = self.query_one(HitList)
        if not self._query_text.strip():
            self.query_one(ScoreStrip).clear()
            self.run_worker(hits.clear_hits(Text("type a question above", style="dim")), group="hits")
            return
        if self.process_stopped:
            hits.show_summary(
                Text("the embedding process is stopped: a new question cannot be embedded (r)", style="red")
            )
            return
        if self._process is None:
            hits.show_summary(Text("waiting for the model to load before ranking…", style="yellow"))
            return
        # Asked even before the model is ready: the process answers right after its EngineReady.
        self._query_vector = self._process.embed_query(self._query_text)
        if self.model is None:
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
        if self._process is None and self.process_stopped:
            self._restarts = RestartBudget()
            self._start_process()
        self._rebuild(self.params, f"re-scanning {self.config.path}")

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_change_k(self, delta: int) -> None:
        self.apply_settings(Settings(self.params, max(1, self.k + delta)))

    def action_settings(self) -> None:
        self.push_screen(SettingsScreen(Settings(self.params, self.k)), self._settings_chosen)

    def _settings_chosen(self, settings: Settings | None) -> None:
        if settings is not None:
            self.apply_settings(settings)

    def apply_settings(self, settings: Settings) -> None:
        """Use new k and window parameters; new parameters rebuild the index in the background."""
        k_changed = settings.k != self.k
        self.k = settings.k
        if settings.params != self.params:
            self._rebuild(settings.params, f"re-cutting with {settings.params.describe()}")
        elif k_changed:
            self._rerank(now=True)
        self._refresh_status()

    def _rebuild(self, params: WindowParams, narration: str) -> None:
        """Drop the index and build it again in the background, from a fresh read of the corpus."""
        self.params = params
        self.index = None
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
        index = self.index
        pending = self._pending_windows or self._windows_without_index
        total = index.window_count if index else (len(pending.windows) if pending else None)
        embedded = index.embedded_count if index else 0
        rate = None
        if self.config.show_rates and index and self._embed_started is not None and embedded:
            elapsed = time.monotonic() - self._embed_started
            fresh = embedded - self._from_cache
            rate = fresh / elapsed if elapsed > 0 and fresh > 0 else None
        text = status_text(
            self.model, self.config.choice.label, self.params, self.k, embedded, total, rate, self._from_cache
        )
        self.query_one("#status", Static).update(text)
        # The bar animates, so deterministic snapshots (no rates) leave it out; the text says the same.
        embedding = bool(index and not index.is_complete)
        self.query_one("#progress", ProgressBar).display = embedding and self.config.show_rates


def _asked(vector: Future[np.ndarray] | None) -> bool:
    """Whether a query's vector was asked for and not lost (a process that died fails its futures)."""
    if vector is None or vector.cancelled():
        return False
    return not (vector.done() and vector.exception() is not None)
