"""The events of every configuration's embedding process, for A and B alike: the run keeps the state,
these handlers draw it. One message type, matched exhaustively.

A part of the main screen (raglens.ui.explorer_screen); the relay worker only posts messages.
"""

from __future__ import annotations

import functools
import sys
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import work
from textual.worker import get_current_worker

from raglens.devices import embeds_queries_on_cpu
from raglens.embedding_events import (
    CacheLookedUp,
    CacheTrouble,
    EngineNote,
    EngineTrouble,
    ModelFailed,
    ModelReady,
    ProcessEnded,
    QueryEmbedded,
    ScoreExplained,
    VectorsEmbedded,
    WindowsDone,
)
from raglens.precision import precision_note, read_cpu_features
from raglens.printable import printable
from raglens.process_restarts import describe_exit
from raglens.run import ConfigurationRun, ProcessOutcome
from raglens.ui.explorer_screen import ExplorerScreen
from raglens.ui.messages import CoverageMeasured, RunEvent, while_shown

if sys.version_info >= (3, 11):
    from typing import assert_never
else:  # textual depends on typing_extensions
    from typing_extensions import assert_never

if TYPE_CHECKING:
    from raglens.corpus import Corpus
    from raglens.index import VectorIndex
    from raglens.stored_index import IndexPlace


@dataclass(frozen=True)
class RunNames:
    """How the log and notifications name one configuration's run and what starts it again."""

    prefix: str
    """Before each of its log lines."""
    process: str
    """Its embedding process, at the start of a sentence."""
    model_failed: str
    """The title of the notification that its model failed."""
    try_again: str
    """The key that starts it again after raglens gave up on it."""


A_NAMES = RunNames("", "The embedding process", "the model failed", "r (re-scan) tries again")
B_NAMES = RunNames("B: ", "B's embedding process", "configuration B's model failed", "v starts B again")


class RunEvents(ExplorerScreen):
    """What each configuration's process reports, drawn: the log, A's status and file, B's pane."""

    _backed_indexes: weakref.WeakSet[VectorIndex]
    """The indexes whose memory a worker was asked to back."""

    def run_of(self, run_id: int) -> ConfigurationRun | None:
        """The run with this id, if it is still shown."""
        return next((run for run in self.runs() if run.run_id == run_id), None)

    def names(self, run: ConfigurationRun) -> RunNames:
        """How the log and notifications name ``run``: A plainly, B as B."""
        return A_NAMES if run is self.a else B_NAMES

    def prefix(self, run: ConfigurationRun) -> str:
        """Before each of a run's log lines: nothing for A, ``B: `` for B."""
        return self.names(run).prefix

    def back_new_index(self, run: ConfigurationRun) -> None:
        """Have the memory of a run's index made since last asked backed in a worker, before its
        vectors need it (``VectorIndex.fault_in``); each index once."""
        index = run.index
        if index is not None and index.maps_its_own_memory and index not in self._backed_indexes:
            self._backed_indexes.add(index)
            self.back_index_memory(run, index)

    @work(thread=True, group="index-memory", exit_on_error=False, description="backing the index's memory")
    def back_index_memory(self, run: ConfigurationRun, index: VectorIndex) -> None:
        """Fault in ``index``'s pages, a few MiB at a time, until the app ends or the run's index is
        another (a re-scan or a re-cut replaced it: its memory goes with it)."""
        worker = get_current_worker()
        index.fault_in(lambda: worker.is_cancelled or run.index is not index)

    @work(thread=True, group="embedder", exit_on_error=False, description="embedding process")
    def relay_events(self, run: ConfigurationRun) -> None:
        """Post each event of the run's current process, until the process ends.

        numpy is imported here first, by this thread alone, before any event can need it: the index
        the UI thread builds on ModelReady, the vectors this thread unpickles. Two threads importing
        numpy at once can leave one of them a half-initialised module. Its BLAS is kept to one thread
        (raglens.ui.blas_threads). The ranking's own modules follow (~30 ms), while the model still
        loads, so that the first ranking imports nothing.
        """
        import raglens.index
        import raglens.ui.ranking  # noqa: F401
        from raglens.ui.blas_threads import limit_blas_to_one_thread

        limit_blas_to_one_thread()

        process, incarnation = run.process, run.incarnation
        if process is None:
            return
        worker = get_current_worker()
        for event in process.events(lambda: worker.is_cancelled):
            self.post_message(RunEvent(run.run_id, incarnation, event))

    @while_shown
    def on_run_event(self, message: RunEvent) -> None:
        """One event of a configuration's process: the run keeps the state, this draws it."""
        run = self.run_of(message.run_id)
        if run is None:
            return  # a configuration replaced since
        prefix, event = self.prefix(run), message.event
        match event:
            case ModelReady():
                took_stored_index = run.model_ready(event)
                limit = event.max_seq_length or "all"
                reads = f"{event.dimension} dimensions, reads at most {limit} tokens"
                if event.lexical:
                    reads = "reads every word of a window; a question gets every window's score"
                self.narrate(f"{prefix}model {event.describe()}: {reads}")
                on_cpu = embeds_queries_on_cpu(event.device)
                note = precision_note(event.precision, on_cpu, read_cpu_features())
                if note is not None:
                    self.narrate(prefix + note)
                    title = "approximate scores" + (" (B)" if prefix else "")
                    self.notify(note, title=title, severity="warning", timeout=20, markup=False)
                self._ask_again(run)
                if took_stored_index:
                    self.stored_index_taken(run)
            case ModelFailed():
                run.model_failed(event.message)
                self.narrate(f"{prefix}error: {event.message}")
                title = self.names(run).model_failed
                self.notify(printable(event.message), title=title, severity="error", timeout=60, markup=False)
            case CacheLookedUp():
                if run.cache_looked_up(event):
                    from raglens.pipeline_steps import VectorsFromCache  # values only: no pipeline here

                    self.narrate(prefix + VectorsFromCache(event.found, event.total, event.oldest).describe())
            case VectorsEmbedded():
                replying = run.cache_replying
                if run.vectors_arrived(event):
                    self._vectors_arrived(run, event, cache_replied=replying and not run.cache_replying)
            case WindowsDone():
                if run.windows_done(event):
                    self._window_set_done(run)
            case CacheTrouble():
                self.narrate(f"{prefix}cache: {event.message}")
                self.notify(event.message, title="vector cache", severity="warning", timeout=20, markup=False)
            case EngineNote():
                run.engine_noted(event.message)
                self.narrate(f"{prefix}engine: {event.message}")
            case EngineTrouble():
                self.narrate(f"{prefix}engine: {event.message}")
                self.notify(event.message, title="model engine", severity="warning", timeout=20, markup=False)
            case ProcessEnded():
                self._process_ended(run, message.incarnation, event)
            case QueryEmbedded() | ScoreExplained():
                pass  # the process handle resolves their futures; the relay never sees one
            case _:
                assert_never(event)
        self._run_changed(run)

    def _run_changed(self, run: ConfigurationRun) -> None:
        """Draw what a run's state says: A's status line, or B's pane."""
        self.back_new_index(run)
        if run is self.a:
            self.refresh_status()
            self.keep_memo_when_quiet()
        else:
            self.show_versus()

    def _ask_again(self, run: ConfigurationRun) -> None:
        """A (re)opened engine: ask what its process was not asked, or asked and lost."""
        if run is self.a:
            self.ask_again()
        else:
            self.rank_versus_now()

    def _vectors_arrived(self, run: ConfigurationRun, event: VectorsEmbedded, *, cache_replied: bool) -> None:
        if run is not self.a:
            self.versus_vectors_arrived()
            return
        path, current = self.shown_window or ("", None)
        in_view = not set(event.rows).isdisjoint(self.a.file_rows.get(path, range(0)))
        if current is not None and in_view:
            self.show_file(path, current, scroll=False)  # token counts and read limits just arrived
        self.vectors_arrived(event.vectors, in_view=in_view, cache_replied=cache_replied)

    def stored_index_taken(self, run: ConfigurationRun) -> None:
        """The run's windows came with their complete index, as stored when the corpus last read the
        same: rank over it now, as when the cache's last vectors arrive."""
        from raglens.pipeline_steps import IndexTaken  # values only: no pipeline here

        index = run.index
        assert index is not None
        self.narrate(self.prefix(run) + IndexTaken(index.window_count).describe())
        if run is self.a:
            self.vectors_arrived(index.snapshot().vectors, in_view=True, cache_replied=True)
        else:
            self.versus_vectors_arrived()
        self._window_set_done(run)
        self._run_changed(run)

    def _window_set_done(self, run: ConfigurationRun) -> None:
        index = run.index
        assert index is not None
        prefix = self.prefix(run)
        embedded = index.window_count - run.from_cache
        if run.lexical:
            self.narrate(f"{prefix}index ready: {index.window_count} window(s) indexed by their words")
        else:
            self.narrate(f"{prefix}index ready: {index.window_count} vector(s), {embedded} embedded")
        if run is self.a:
            self.settle_heap_soon()  # the whole index, vectors and extents, out of the collector's way
        if run is self.a and not run.lexical:
            self._narrate_coverage(index)
        else:
            self.rank_versus_now()
        to_store = run.index_to_store()
        if to_store is not None:
            # After the hits the complete index brings, as the coverage: its 150 MB at 100k windows are
            # written by a thread, and the next launch on unchanged files takes them whole.
            self.when_ranked(functools.partial(self.store_complete_index, index, *to_store))

    @work(thread=True, group="index-store", exit_on_error=False, description="storing the index")
    def store_complete_index(
        self, index: VectorIndex, place: IndexPlace, fingerprint: str, corpus: Corpus
    ) -> None:
        """Keep a complete index where the next launch on the same files finds it (``stored_index``);
        kept even if a re-scan replaced it meanwhile: it is still the index of those files."""
        from raglens.stored_index import store_index

        store_index(place.cache_dir, place.key, index, fingerprint, corpus)

    def _narrate_coverage(self, index: VectorIndex) -> None:
        """Say in the log how much of the corpus the model never reads, once every extent is known."""
        if self.corpus is None or not index.extents_known():
            return
        lengths = {source.path: source.length for source in self.corpus.files}
        limit = self.a.model.max_seq_length if self.a.model is not None else None
        # After the hits the completed index brings: beside their ranking, it slowed it threefold.
        self.when_ranked(
            functools.partial(self._measure_coverage_of, self.a.generation, lengths, index, limit)
        )

    def _measure_coverage_of(
        self, generation: int, lengths: dict[str, int], index: VectorIndex, limit: int | None
    ) -> None:
        """Measure window set ``generation``'s coverage, unless a re-scan or re-cut replaced it."""
        if generation == self.a.generation:
            self.measure_coverage(generation, lengths, index, limit)

    @work(thread=True, exclusive=True, group="coverage", exit_on_error=False, description="coverage")
    def measure_coverage(
        self, generation: int, lengths: dict[str, int], index: VectorIndex, limit: int | None
    ) -> None:
        """How much of each file the model reads, off the event loop.

        ``index`` is complete, so its extents no longer change.
        """
        from raglens.diagnostics.coverage import corpus_coverage  # numpy is loaded by now

        _, _, chars_read = index.stored_arrays()
        coverage = corpus_coverage(lengths, index.windows, chars_read, limit)
        if not get_current_worker().is_cancelled:
            self.post_message(CoverageMeasured(generation, coverage))

    @while_shown
    def on_coverage_measured(self, message: CoverageMeasured) -> None:
        from raglens.diagnostics.describe import describe_coverage

        if message.generation != self.a.generation:
            return  # of a window set replaced since
        coverage = message.coverage
        self.narrate(describe_coverage(coverage))
        # Said where it is seen, not only in the log (folded away at 80x24): the status line.
        self.cut_short = coverage.truncated_count / coverage.window_count if coverage.window_count else None
        self.refresh_status()

    def _process_ended(self, run: ConfigurationRun, incarnation: int, event: ProcessEnded) -> None:
        """A process died under the app: its run starts another (the cache holds what it embedded)
        and hits keep ranking what is embedded; after RESTART_LIMIT deaths a minute, it stops trying."""
        if not self.app.is_running:
            return  # the app is closing
        outcome = run.process_ended(incarnation)
        names = self.names(run)
        name, prefix = names.process, names.prefix
        how = describe_exit(event.exit_code)
        embedded = run.embedded_count
        match outcome:
            case ProcessOutcome.ALREADY_REPLACED | ProcessOutcome.MODEL_FAILED:
                return
            case ProcessOutcome.RESTARTED:
                self.narrate(f"{prefix}the embedding process ended ({how}); starting it again")
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
                self.narrate(f"{prefix}the embedding process ended ({how}) again; not starting it again")
                self.notify(
                    f"{name} ended ({how}) {run.restarts.limit} times within a minute, so "
                    f"raglens stopped starting it. Hits rank the {embedded:,} window(s) embedded; a new "
                    f"question cannot be embedded. {names.try_again}; the log file says more.",
                    title="embedding process stopped",
                    severity="error",
                    timeout=60,
                    markup=False,
                )
            case _:
                assert_never(outcome)
