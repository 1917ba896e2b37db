"""One retrieval configuration at work: its embedding process, windows, index and question; no Textual.

The explorer holds one run for configuration A and one for B while they are compared; each is driven
the same way (windows in, process events in, questions asked), so what holds for one holds for both:
a process that dies is started again within a budget, a failed model stops it, vectors of an older
window set are dropped. The app only draws what a run reports.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING

from raglens.configuration import RetrievalConfig, is_bm25
from raglens.embedding_events import (
    CacheLookedUp,
    ModelChoice,
    ModelReady,
    VectorsEmbedded,
    WindowsDone,
)
from raglens.embedding_process import EmbeddingProcess
from raglens.precision import choose_precision
from raglens.process_restarts import RestartBudget
from raglens.windows import WindowColumns

if TYPE_CHECKING:
    # numpy (through the index) loads in the app's workers after the first frame: not here.
    from concurrent.futures import Future

    import numpy as np

    from raglens.corpus import Corpus
    from raglens.index import VectorIndex
    from raglens.stored_index import IndexPlace
    from raglens.windows import Window, WindowParams, WindowSet


@dataclass(frozen=True)
class EngineSettings:
    """How every run of a session starts its embedding process, whatever its configuration."""

    device: str | None = None
    offline: bool = True
    embedder_factory: str | None = None
    """``module:callable`` of another embedder (tests use a fake); None means the model itself."""
    cache_dir: str | None = None
    """The vector cache's folder; None runs without a cache."""
    log_path: str | None = None
    """Where the embedding process writes its own output; None discards it."""

    def choice(self, config: RetrievalConfig) -> ModelChoice:
        """The model ``config`` names, as the embedding process takes it (BM25: no fake stands in)."""
        return ModelChoice(
            config.model,
            self.device,
            choose_precision(config.precision),
            self.offline,
            None if is_bm25(config.model) else self.embedder_factory,
            config.max_seq_length,
        )

    def start(self, config: RetrievalConfig) -> EmbeddingProcess:
        """An embedding process for ``config``, started now; it opens its engine in the background."""
        return EmbeddingProcess(self.choice(config), cache_dir=self.cache_dir, log_path=self.log_path)


@dataclass(frozen=True, eq=False)
class Question:
    """A question as one run's model embeds it; ``number`` tells it from every other question asked."""

    number: int
    text: str
    vector: Future[np.ndarray]

    def is_asked(self) -> bool:
        """Whether its vector is coming or came (a process that died fails the vectors it owed)."""
        if self.vector.cancelled():
            return False
        return not (self.vector.done() and self.vector.exception() is not None)


class ProcessOutcome(Enum):
    """What a run did when its embedding process ended."""

    ALREADY_REPLACED = "already replaced"
    """An older process of this run, or a run being closed: nothing to do."""
    MODEL_FAILED = "model failed"
    """The model failed and said why: starting it again would fail again."""
    RESTARTED = "restarted"
    GAVE_UP = "gave up"
    """It died RESTART_LIMIT times within a minute: no new process until asked (``restart``)."""


class ConfigurationRun:
    """One configuration's embedding process, window set, index and standing question."""

    def __init__(
        self,
        run_id: int,
        config: RetrievalConfig,
        engine: EngineSettings,
        process: EmbeddingProcess | None = None,
        *,
        start_process: Callable[[RetrievalConfig], EmbeddingProcess] | None = None,
    ) -> None:
        """``process`` is one already started for ``config`` (the CLI starts A's before Textual loads);
        without one, :meth:`start` starts it."""
        self.run_id = run_id
        self.config = config
        self.choice = engine.choice(config)
        """The model to run and how, as the embedding process takes it."""
        self._start_process = start_process or engine.start
        self.process: EmbeddingProcess | None = process
        self.incarnation = 1
        """Which of the run's processes is current: each restart starts the next one."""
        self.restarts = RestartBudget()
        self.model: ModelReady | None = None
        self.failure: str | None = None
        """Why the model failed (it said so, and its process ended), once it has."""
        self.opening: str | None = None
        """What the engine last said it was doing while it opened (writing the export, importing)."""
        self.stopped = False
        """No process any more: the model failed, or the process died too often."""
        self.corpus: Corpus | None = None
        """The corpus the windows were cut from."""
        self.windows: WindowColumns = WindowColumns.empty()
        """Every window of the current set, in corpus order (the index's rows once it exists)."""
        self.generation = 0
        """Which window set the index belongs to; vectors of an older set are dropped on arrival."""
        self.index: VectorIndex | None = None
        """Every window and the vectors embedded so far; None until the windows and the model are known."""
        self.from_cache = 0
        """How many rows of the current index came from the vector cache (or a stored index)."""
        self.index_place: IndexPlace | None = None
        """Where the current window set's complete index is kept; None where it cannot be."""
        self.index_taken = False
        """Whether the current index is one stored there, taken whole."""
        self._ready_incarnation = 0
        """The incarnation whose process sent ``model``."""
        self._cached_to_come = 0
        """Rows the cache found for the current set that have not arrived yet: they come in a burst
        right after the lookup, before the model embeds anything."""
        self._cache_answered = False
        """Whether the cache has said how many of the current set's vectors it has."""
        self.embed_started: float | None = None
        self.question: Question | None = None
        self._unsent: list[str] | None = None
        """The texts of a window set cut before the process could take them."""
        self._texts_left_out = False
        """The set came without its texts (its stored index was to be taken): sliced if it is not."""
        self._open_path: str | None = None
        """The file on screen: a window set sent (or sent again) embeds its windows first."""
        self._sent_to: EmbeddingProcess | None = None
        """The process the current window set went to; a new one (a restart) is sent it again."""
        self._cutting = False
        """New window settings were chosen and their windows are not cut yet."""

    @property
    def lexical(self) -> bool:
        """A BM25 configuration: each question is answered with every window's score, not a vector."""
        return is_bm25(self.config.model)

    def model_label(self) -> str:
        """The model's name: as it said it once loaded, else as configured."""
        return self.model.name if self.model is not None else self.choice.label

    # Windows.

    def set_windows(
        self,
        corpus: Corpus,
        window_set: WindowSet,
        open_path: str | None = None,
        place: IndexPlace | None = None,
    ) -> None:
        """A new window set: sent to the process at once (model ready or not), indexed once it is;
        the windows of ``open_path``, the file on screen, are embedded first.

        ``place``: where its complete index is kept. When an index of the model running is stored
        there, it is the index, complete at once, and nothing goes to the process; before the model is
        ready to say which it is, the set waits for it (the process reads nothing before it is ready).
        """
        self.corpus = corpus
        self.windows = window_set.windows
        self.generation += 1
        self.from_cache = 0
        self._cached_to_come = 0
        self._cache_answered = False
        self.index = None
        self.index_place = place
        self.index_taken = False
        self._unsent = window_set.texts
        self._texts_left_out = window_set.texts is None
        self._open_path = open_path
        self._cutting = False
        stored = place is not None and place.found is not None
        if stored and (not self._model_is_current or self._take_stored()):
            return  # it waits for the model to say whether the stored index is its own, or took it
        self._send_windows()
        self._make_index()
        if self.lexical and self.question is not None:
            # A lexical answer scores one window set: the question is asked again of the new one,
            # after it (the process takes requests in order).
            question, self.question = self.question, None
            self.ask(question.number, question.text)

    @property
    def _model_is_current(self) -> bool:
        """Whether the model that said it was ready is the current process's (not one before a restart)."""
        return self.model is not None and self._ready_incarnation == self.incarnation

    @property
    def waits_for_model(self) -> bool:
        """Whether the window set waits for the model to say whether the stored index is its own."""
        place = self.index_place
        found = place is not None and place.found is not None
        return found and not self._model_is_current and self.index is None and not self._cutting

    def _take_stored(self) -> bool:
        """Make the index stored at the set's place the index, if the model running made it; whether it
        did. Otherwise the place keeps nothing found, and the set goes the usual way."""
        from raglens.stored_index import take_stored_index

        model, place = self.model, self.index_place
        assert model is not None and place is not None
        self.index_place = replace(place, found=None)  # taken or not, it is not asked again
        taken = take_stored_index(place, self.windows, model.cache_fingerprint, model.dimension)
        if taken is None:
            return False
        self.index = taken
        self._texts_left_out = False
        self.from_cache = len(self.windows)
        self.index_taken = True
        self._unsent = None  # the process is not sent this set: it has nothing to embed
        if self.process is not None and self._sent_to is self.process:
            # It may still be embedding a set sent before (a re-cut and back): an empty set stops it.
            self.process.index_windows(self.generation, [])
            self._sent_to = None
        return True

    def index_to_store(self) -> tuple[IndexPlace, str, Corpus] | None:
        """Where to keep the complete index, the fingerprint to keep it under and its corpus; None when
        it needs no keeping (taken from there, incomplete, lexical, or no place or fingerprint)."""
        model, place, corpus = self.model, self.index_place, self.corpus
        if self.index_taken or place is None or model is None or model.cache_fingerprint is None:
            return None
        if self.index is None or not self.index.is_complete or self.lexical or corpus is None:
            return None
        return place, model.cache_fingerprint, corpus

    def recut(self, params: WindowParams) -> None:
        """New window settings: the index is dropped until the windows cut with them arrive."""
        self.config = replace(self.config, params=params)
        self.index = None
        self.index_place = None
        self.index_taken = False
        self.generation += 1  # vectors of the old set still on their way are dropped
        self._cached_to_come = 0
        self._cache_answered = False
        self._unsent = None  # an old set not sent yet never will be
        self._texts_left_out = False
        self._cutting = True

    def _send_windows(self) -> None:
        """Send the unsent window set: the texts go once; later requests name rows only."""
        if self._texts_left_out and self.corpus is not None and not self._cutting:
            from raglens.windows import window_texts

            self._texts_left_out = False  # the set came without them, and its stored index was not taken
            self._unsent = window_texts(self.corpus, self.windows)
        if self._unsent is None or self.process is None or self._cutting:
            return
        first = self._waiting_rows(self._open_path) if self._open_path is not None else []
        self.process.index_windows(self.generation, self._unsent, first)
        self._unsent = None
        self._sent_to = self.process
        self.embed_started = time.monotonic()

    def _resend_windows(self) -> None:
        """Send the window set again to a restarted process: the cache serves what was embedded.

        A complete index needs nothing from a model's new process; a lexical run's new process has no
        index until it is sent the windows, and would hold every question until then.
        """
        if self.process is None or self._sent_to is self.process or self.corpus is None or not self.windows:
            return
        if self._cutting:
            return  # the windows being cut go to it once they are
        if self._unsent is None and self.index is not None and self.index.is_complete and not self.lexical:
            return
        if self._unsent is None:
            from raglens.windows import window_texts

            self._unsent = window_texts(self.corpus, self.windows)
        self._send_windows()

    def _make_index(self) -> None:
        """The empty index of the window set, once the model's dimension is known."""
        if self.index is not None or self.model is None or self.corpus is None or self._cutting:
            return
        from raglens.index import VectorIndex  # the relay imported numpy before it posted ModelReady

        self.index = VectorIndex(self.windows, self.model.dimension)

    @property
    def file_rows(self) -> Mapping[str, range]:
        """The rows of each file's windows: contiguous, since windows are cut file by file."""
        return self.windows.file_rows()

    def file_windows(self, path: str) -> list[Window]:
        """The windows of ``path``, in order."""
        rows = self.file_rows.get(path, range(0))
        return self.windows[rows.start : rows.stop]

    def embed_next(self, path: str) -> None:
        """While embedding, have the process embed ``path``'s windows next; only their rows travel."""
        self._open_path = path
        if self.index is None or self.index.is_complete or self.process is None:
            return
        waiting = self._waiting_rows(path)
        if waiting:
            self.process.embed_first(self.generation, waiting)

    def _waiting_rows(self, path: str) -> list[int]:
        """The rows of ``path``'s windows that have no vector yet (all of them before the index)."""
        index, rows = self.index, self.file_rows.get(path, range(0))
        return [row for row in rows if index is None or not index.has_vector(row)]

    @property
    def embedded_count(self) -> int:
        return self.index.embedded_count if self.index is not None else 0

    @property
    def window_count(self) -> int | None:
        """How many windows the current set has; None while none is cut (or new settings are cutting)."""
        return len(self.windows) if self.corpus is not None and not self._cutting else None

    @property
    def is_complete(self) -> bool:
        return self.index is not None and self.index.is_complete

    @property
    def cache_replying(self) -> bool:
        """Whether vectors the cache found for the current set are still on their way (~1 s at 100k
        windows): a ranking of part of them is thrown away when the rest arrive."""
        return self._cached_to_come > 0

    @property
    def cache_reply_over(self) -> bool:
        """Whether the current set's cached vectors have all arrived (none on their way, and the cache
        has answered) or its index is complete: what follows is the model embedding, or nothing."""
        return self.is_complete or (self._cache_answered and self._cached_to_come == 0)

    # Events of the process (the app dispatches them here, then draws).

    def model_ready(self, ready: ModelReady) -> bool:
        """The engine is open: index the window set sent (or send it now, to a restarted process);
        whether it made the set's stored index the index (the set waited for it to be ready)."""
        waited = self.waits_for_model
        self.model = ready
        self._ready_incarnation = self.incarnation
        if waited and self._take_stored():
            return True
        self._send_windows()
        self._resend_windows()
        self._make_index()
        return False

    def cache_looked_up(self, event: CacheLookedUp) -> bool:
        """Count the window set's cached vectors; whether the event is the current set's (a taken
        index's empty set, sent to stop the process, counts nothing)."""
        if event.generation != self.generation or self.index_taken:
            return False
        self.from_cache = event.found
        self._cached_to_come = event.found
        self._cache_answered = True
        return True

    def vectors_arrived(self, event: VectorsEmbedded) -> bool:
        """Fill the index; whether the event was the current window set's."""
        if event.generation != self.generation:
            return False
        self._cached_to_come = max(0, self._cached_to_come - len(event.rows))
        if self.index is None:
            return False
        self.index.fill(event.rows, event.vectors, event.extents)
        return True

    def windows_done(self, event: WindowsDone) -> bool:
        """Whether the current window set is now complete (a taken index was so from the start)."""
        return self.index is not None and event.generation == self.generation and not self.index_taken

    def engine_noted(self, note: str) -> None:
        """What the engine is doing while it opens, shown until it is ready."""
        if self.model is None:
            self.opening = note

    def model_failed(self, message: str) -> None:
        """The model failed (its process ends next): it is not started again for that."""
        self.failure = message

    def process_ended(self, incarnation: int, now: float | None = None) -> ProcessOutcome:
        """The process of ``incarnation`` is gone: start another one within the budget."""
        ended = self.process
        if incarnation != self.incarnation or ended is None:
            return ProcessOutcome.ALREADY_REPLACED
        self.process = None
        self._cached_to_come = 0  # a process that ended sends no more
        self._cache_answered = False  # the next one answers again
        ended.close(timeout=1)
        if self.failure is not None:
            self.stopped = True
            return ProcessOutcome.MODEL_FAILED
        if not self.restarts.allow(time.monotonic() if now is None else now):
            self.stopped = True
            return ProcessOutcome.GAVE_UP
        self._start_next()
        return ProcessOutcome.RESTARTED

    def start(self) -> None:
        """Start the run's process, unless it was given one."""
        if self.process is None and self.incarnation == 1:
            self.process = self._start_process(self.config)

    def restart(self) -> bool:
        """Start a stopped run again with a fresh budget (the user asked); whether it was stopped."""
        if self.process is not None:
            return False
        self.restarts = RestartBudget()
        self._start_next()
        return True

    def _start_next(self) -> None:
        """A new process: its ModelReady sends the window set again and re-asks the question."""
        self.stopped = False
        self.failure = None
        self.incarnation += 1
        self.process = self._start_process(self.config)

    # The question.

    def ask(self, number: int, text: str) -> Question | None:
        """Have the model embed question ``number`` (once, unless its process died); None when stopped."""
        question = self.question
        if question is not None and question.number == number and question.is_asked():
            return question
        if self.process is None:
            return None
        # Asked even before the model is ready: the process answers right after it is.
        self.question = Question(number, text, self.process.embed_query(text))
        return self.question

    def close(self, timeout: float = 2.0) -> None:
        """End the run's process (the app is closing, or this configuration is no longer compared)."""
        process, self.process = self.process, None
        if process is not None:
            process.close(timeout=timeout)
