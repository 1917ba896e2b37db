"""The explorer's main screen: corpus tree, window view, live question and hits over a background index.

Put together from parts, one module each (raglens.ui.explorer_screen says what they share); this
module lays out the panes, reads the corpus and owns A's window settings and k.
"""

from __future__ import annotations

import functools
import gc
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import Footer, Input, ProgressBar
from textual.worker import Worker, WorkerState

from raglens.corpus import Corpus, CorpusOptions, require_indexable
from raglens.corpus_memo import MemoToSave, scan_remembering
from raglens.errors import RaglensError
from raglens.printable import printable
from raglens.ui.collector import collector_paused
from raglens.ui.error_log import write_error_log
from raglens.ui.free_memory import give_back_free_memory
from raglens.ui.grid_actions import GridActions
from raglens.ui.highlight import warm_up
from raglens.ui.lab_actions import LabActions
from raglens.ui.messages import CorpusFailed, CorpusLoaded, WindowsCut, while_shown
from raglens.ui.navigation import Navigation
from raglens.ui.questions import Questions
from raglens.ui.run_events import RunEvents
from raglens.ui.screens.help import HelpScreen
from raglens.ui.screens.settings import Settings, SettingsScreen
from raglens.ui.status import status_text
from raglens.ui.versus_actions import VersusActions
from raglens.ui.why_actions import WhyActions
from raglens.ui.widgets.corpus_tree import CorpusTree, FolderListing, list_folders
from raglens.ui.widgets.hit_list import HitList
from raglens.ui.widgets.pipeline_log import PipelineLog
from raglens.ui.widgets.score_strip import ScoreStrip
from raglens.ui.widgets.status_line import StatusLine
from raglens.ui.widgets.versus_hits import VersusHits
from raglens.ui.widgets.window_view import WindowView
from raglens.ui.worker_threads import ContextPerCallExecutor, isolate_worker_contexts

if TYPE_CHECKING:
    from raglens.embedding_events import ModelChoice
    from raglens.embedding_process import EmbeddingProcess
    from raglens.ui.app_config import AppConfig
    from raglens.windows import WindowParams


FREEING_MEMORY = "free-memory"
MEMO_AT_LATEST_S = 10.0
"""The longest the memo of the files as read waits for the cache's vectors before it is written."""
LONG_LIVED_WORKERS = frozenset({"embedder", "grid", "controls"})
"""Worker groups that run for as long as a process does, or wait on one: the heap is settled while
they run (they hold only what lives as long)."""
SETTLE_RETRY_S = 0.25


class MainScreen(Navigation, LabActions, WhyActions, VersusActions, GridActions, Questions, RunEvents):
    """Runs rung-1 naive RAG on one folder and shows every step of it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # First: at 80 columns the footer shows the first ten or so, and help names every key (quit too).
        Binding("question_mark,f1", "help", "help"),
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
        Binding("i", "unfold_findings", "findings", show=False),
        Binding("l", "toggle_log", "log"),
        Binding("m", "toggle_heat", "heat"),
        Binding("s", "toggle_wrap", "wrap", show=False),
        Binding("a", "pin_answer", "pin answer"),
        Binding("u", "unpin", "unpin", show=False),
        Binding("g", "save_case", "save case", show=False),
        Binding("N", "save_negative", "save negative", show=False),
        Binding("c", "prompt_preview", "prompt"),
        Binding("y", "why", "why"),
        Binding("f", "failure_lab", "failure lab"),
        Binding("v", "versus", "versus"),
        Binding("o", "versus_overlay", "B's grid", show=False),
        Binding("x", "eval_grid", "eval grid", show=False),
        Binding("escape", "leave_query", "letter keys"),
    ]

    def __init__(self, config: AppConfig, process: EmbeddingProcess | None = None) -> None:
        """``process`` is an embedding process already started for A (the CLI starts it before
        importing Textual, so the model opens while the app loads); None starts one at mount."""
        super().__init__(config, process)
        self._settle_timer: Timer | None = None
        self._memo_waiting: MemoToSave | None = None
        """The memo of the files as last read, to write once the cache's vectors have arrived."""
        self._memo_timer: Timer | None = None
        self._backed_indexes = weakref.WeakSet()
        self._worker_pool: ContextPerCallExecutor | None = None

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
            yield StatusLine(id="status")
            yield ProgressBar(total=None, show_eta=False, id="progress")
        yield Footer()

    def on_mount(self) -> None:
        self._worker_pool = isolate_worker_contexts()  # before the first worker: none outlives its work
        self.narrate(f"reading {self.config.path}")
        self.a.start()  # before the first frame: the engine opens while Textual paints
        self.refresh_status()
        self.query_one("#query", Input).focus()
        # Reading the corpus is mostly file I/O and imports nothing heavy: it starts with the first paint.
        self.read_corpus(self.a.config.params, self.a.run_id, self.a.choice)
        self.ask_launch_question()
        self.narrate(f"loading {self.a.choice.label} in a separate process")
        # At once: a warm model is ready ~0.3 s after its process starts, and its events wait on the
        # relay's import of numpy (~0.1 s); started after the first paint, that import competed with
        # the first file's paint and the cached vectors waited 0.12-0.3 s.
        self.relay_events(self.a)
        self.call_after_refresh(gc.freeze)  # Textual's own objects; the corpus's once it is shown

    def close_runs(self, timeout: float) -> None:
        """End every configuration's process and the eval grid's child."""
        for run in self.runs():
            run.close(timeout=timeout)
        self.b = None
        self.stop_grid()

    def _settle_heap(self) -> None:
        """Exempt the objects alive now (Textual's, the corpus's) from the cyclic garbage collector.

        A full collection over them stalled the event loop for 40-50 ms in the middle of indexing
        (measured with benchmarks/app_responsiveness.py), 0.3-0.4 s at 100k windows; frozen objects
        are not scanned again. What is frozen is only ever freed by its reference count, so garbage
        is collected first (the objects not frozen yet only: ~0.1 s after a corpus of 100k
        windows), and no worker may be running: a finished worker is a reference cycle (its task's
        context holds it), and one frozen while running would keep its arguments, an index's
        vectors among them, for good. A corpus that replaces another must leave the old one in no
        reference cycle: the corpus tree unlinks its old nodes. A corpus is settled in stages as it
        arrives (its windows, its tree, its index's extents), so no one collection scans all of it.
        """
        self._settle_timer = None
        workers = [worker for worker in self.app.workers if not worker.is_finished]
        long_lived = sum(worker.group in LONG_LIVED_WORKERS for worker in workers)
        # A cancelled worker is finished at once, though its thread runs on: the pool counts it.
        in_pool = self._worker_pool.running if self._worker_pool is not None else long_lived
        letting_go = self.query_one(CorpusTree).holds_retired_nodes  # their pages go back with the rest
        if len(workers) > long_lived or in_pool > long_lived or letting_go:
            self.settle_heap_soon()
            return
        gc.collect()
        gc.freeze()
        self.trim_free_memory()  # the old corpus's pages, freed now, in the reading thread's arena

    @work(thread=True, group=FREEING_MEMORY, exit_on_error=False, description="giving memory back")
    def trim_free_memory(self) -> None:
        """``malloc_trim``, off the event loop: it walks every arena, 70-360 ms after a re-scan at 100k
        windows, and ctypes lets the GIL go while it runs."""
        give_back_free_memory()

    @property
    def settling(self) -> bool:
        """Whether a settling of the heap is due or under way: it waits for the running workers to end
        and for the corpus pane to let the last corpus's nodes go, then gives the pages back."""
        freeing = any(
            worker.group == FREEING_MEMORY and not worker.is_finished for worker in self.app.workers
        )
        return self._settle_timer is not None or freeing

    def settle_heap_soon(self) -> None:
        """Settle the heap when the workers are done; once, however often it is asked meanwhile."""
        if self._settle_timer is None:
            self._settle_timer = self.set_timer(SETTLE_RETRY_S, self._settle_heap)

    @work(thread=True, exclusive=True, group="corpus", exit_on_error=False, description="reading the corpus")
    def read_corpus(self, params: WindowParams, run_id: int, choice: ModelChoice) -> None:
        """Read the corpus and cut run ``run_id``'s windows, whose model ``choice`` names (with its
        index as stored, where the corpus is unchanged since it was)."""
        from raglens.stored_index import cut_with_stored_index

        # Paused: reading 100k windows' worth of files set off full collections that held the event
        # loop's thread from the GIL 0.1-0.2 s. Garbage made meanwhile on any thread waits for the
        # collection that settles the heap once the windows are shown.
        with collector_paused():
            try:
                options = CorpusOptions(max_file_bytes=self.config.max_file_bytes)
                scan = scan_remembering(self.config.path, options, self.cache_dir)
                corpus = scan.corpus
                require_indexable(corpus, self.config.path)
            except RaglensError as error:
                self.post_message(CorpusFailed(error))
                return
            window_set, place = cut_with_stored_index(corpus, params, self.cache_dir, choice)
            folders = list_folders(corpus)
        self.post_message(CorpusLoaded(corpus, params, scan.memo_to_save))
        self.post_message(WindowsCut(run_id, params, corpus, window_set, place, folders))

    @work(thread=True, exclusive=True, group="lexers", exit_on_error=False, description="finding lexers")
    def warm_up_lexers(self, corpus: Corpus) -> None:
        """Import Pygments and find the corpus's lexers (~50 ms), which the first ranking needs."""
        warm_up([source.path for source in corpus.files])

    def keep_memo_when_quiet(self, *, at_latest: bool = False) -> None:
        """Write the memo waiting once A's window set has its cached vectors (or its whole index), its
        model failed, or MEMO_AT_LATEST_S have passed since it came (a model still loading, a cache
        that does not answer).

        The next launch, and a re-scan, read only the files changed since. Written as the corpus was
        drawn, its 74 MB at 100k windows competed for the GIL with the texts' sending and the cached
        vectors' arrival, and the event loop's worst stall of the start-up was 0.15-0.2 s.
        """
        run = self.a
        if self._memo_waiting is None:
            return
        if not (at_latest or run.cache_reply_over or run.stopped or run.failure is not None):
            if self._memo_timer is None:
                self._memo_timer = self.set_timer(MEMO_AT_LATEST_S, self._keep_memo_at_latest)
            return
        memo, self._memo_waiting = self._memo_waiting, None
        if self._memo_timer is not None:
            self._memo_timer.stop()
            self._memo_timer = None
        if run.is_complete:  # after the hits the complete index brings
            self.when_ranked(functools.partial(self.keep_memo, memo))
        else:
            self.keep_memo(memo)

    def _keep_memo_at_latest(self) -> None:
        self._memo_timer = None
        self.keep_memo_when_quiet(at_latest=True)

    @work(thread=True, group="corpus-kept", exit_on_error=False, description="keeping the files as read")
    def keep_memo(self, memo: MemoToSave) -> None:
        """Write the memo of the files as read."""
        memo.save()

    @while_shown
    def on_corpus_loaded(self, message: CorpusLoaded) -> None:
        # Once the corpus is drawn: done by the reading worker right after it posted the windows, this
        # kept the event loop's thread from the GIL while it handled them (at 100k windows, 63 ms of
        # which 13 ms its own; under 30 ms after). A warm model's cached vectors come ~0.1 s later.
        self.call_after_refresh(self.warm_up_lexers, message.corpus)
        if message.memo_to_save is not None:
            self._memo_waiting = message.memo_to_save  # a newer reading's memo replaces one not written
        if message.params != self.a.config.params:
            return  # superseded by newer settings
        self.corpus = message.corpus
        corpus = message.corpus
        self.narrate(f"found {len(corpus.files)} file(s) to index, skipped {len(corpus.skipped)}")
        self.versus_corpus_changed(corpus)

    @while_shown
    def on_windows_cut(self, message: WindowsCut) -> None:
        run = self.run_of(message.run_id)
        if run is None or message.params != run.config.params:
            return  # a configuration replaced since, or superseded by newer settings
        shown_path = self.shown_window[0] if self.shown_window is not None else None
        run.set_windows(message.corpus, message.window_set, shown_path, message.index_place)
        self.back_new_index(run)
        self.narrate(
            f"{self.prefix(run)}cut into {len(run.windows)} window(s) of {message.params.describe()}"
        )
        if run is self.a:
            self._a_windows_cut(message.corpus, message.folders)
        else:
            self.versus_windows_cut()
        if run.index_taken:
            self.stored_index_taken(run)  # its ranking starts here, which the memo then follows
        if run is self.a:
            self.keep_memo_when_quiet()

    def _a_windows_cut(self, corpus: Corpus, folders: FolderListing | None) -> None:
        self.cut_short = None  # measured again once the new windows are embedded
        self.query_one(CorpusTree).show_corpus(corpus, self.a.file_rows, folders)
        self.settle_heap_soon()  # the windows, once the worker that cut them is done
        self.refresh_status()
        # Redraw the shown file with the new grid (or open the first file on the first load).
        if self.shown_window is not None and self.shown_window[0] in self.a.file_rows:
            self.show_file(*self.shown_window)
        elif corpus.files:
            self.open_first_file(corpus.files[0].path)

    def on_corpus_tree_filled(self, message: CorpusTree.Filled) -> None:
        self.settle_heap_soon()  # the new corpus, once the tree holds the folders it opens with

    @while_shown
    def on_corpus_failed(self, message: CorpusFailed) -> None:
        self.narrate(f"error: {message.error}")
        self.notify(str(message.error), title="cannot index", severity="error", timeout=30, markup=False)
        self.query_one(WindowView).show_message("nothing to show", str(message.error))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker's exception becomes a notification and a traceback in the log file; the app goes on."""
        if event.worker.is_finished:
            self.ranking_ended(event.worker)
        if event.state is WorkerState.ERROR:
            error = event.worker.error
            self.narrate(f"error in {event.worker.description}: {error}")
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
        # On screen too: an unchanged corpus is re-read in a blink, and the log may be folded away.
        self.notify("only files changed since are read again (l: the log)", title="re-scanning", timeout=3)

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())

    def action_change_k(self, delta: int) -> None:
        self.apply_settings(Settings(self.a.config.params, max(1, self.k + delta)))

    def action_settings(self) -> None:
        self.app.push_screen(SettingsScreen(Settings(self.a.config.params, self.k)), self._settings_chosen)

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
            self.rerank(now=True)
        self.refresh_status()

    def _rebuild(self, params: WindowParams, narration: str) -> None:
        """Drop A's index and build it again in the background, from a fresh read of the corpus."""
        self.a.recut(params)
        self.narrate(narration)
        self.read_corpus(params, self.a.run_id, self.a.choice)
        self.refresh_status()

    def refresh_status(self) -> None:
        run = self.a
        index = run.index
        embedded = run.embedded_count
        rate = None
        if self.config.show_rates and index and run.embed_started is not None and embedded:
            elapsed = time.monotonic() - run.embed_started
            fresh = embedded - run.from_cache
            rate = fresh / elapsed if elapsed > 0 and fresh > 0 else None
        words = functools.partial(
            status_text,
            run.model,
            run.choice.label,
            run.config.params,
            self.k,
            embedded,
            run.window_count,
            rate,
            run.from_cache,
            cut_short=self.cut_short,
            opening=run.opening,
        )
        self.query_one(StatusLine).present(lambda width: words(width=width))
        # The bar animates, so deterministic snapshots (no rates) leave it out; the text says the same.
        # Shown by its class, which a narrow screen's style overrules (raglens.tcss).
        progress = self.query_one("#progress", ProgressBar)
        progress.set_class(bool(index and not index.is_complete) and self.config.show_rates, "-embedding")
        if index is not None:
            progress.update(total=max(index.window_count, 1), progress=embedded)
