"""One configuration's run, driven as the app drives A and B: windows in, process events in, questions
asked. A fake process records what the run sends it; no Textual, no model."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future

import numpy as np
import pytest

from raglens.configuration import RetrievalConfig
from raglens.corpus import CorpusOptions, load_corpus
from raglens.embedding_events import CacheLookedUp, ModelReady, ReadingExtent, VectorsEmbedded, WindowsDone
from raglens.process_restarts import RESTART_LIMIT
from raglens.run import ConfigurationRun, EngineSettings, ProcessOutcome
from raglens.windows import Unit, WindowParams, cut_window_set
from tests.conftest import SAMPLE_CORPUS

DIMENSION = 4
READY = ModelReady("fake", DIMENSION, 256, "cpu", "fp32", "fake")


class RecordingProcess:
    """Stands for an embedding process: records every request; its query vectors are left pending."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, list[str], tuple[int, ...]]] = []
        self.first: list[tuple[int, list[int]]] = []
        self.queries: list[tuple[str, Future[np.ndarray]]] = []
        self.closed = False

    def index_windows(self, generation: int, texts: Sequence[str], first: Sequence[int] = ()) -> None:
        self.sent.append((generation, list(texts), tuple(first)))

    def embed_first(self, generation: int, rows: Sequence[int]) -> None:
        self.first.append((generation, list(rows)))

    def embed_query(self, text: str) -> Future[np.ndarray]:
        future: Future[np.ndarray] = Future()
        self.queries.append((text, future))
        return future

    def close(self, timeout: float = 5.0) -> None:
        self.closed = True


class Started:
    """The run's ``start_process``: every process it started, in order."""

    def __init__(self) -> None:
        self.processes: list[RecordingProcess] = []

    def __call__(self, config: RetrievalConfig) -> RecordingProcess:
        self.processes.append(RecordingProcess())
        return self.processes[-1]


PARAMS = WindowParams(Unit.CHARS, 1000, 200)


def new_run() -> tuple[ConfigurationRun, Started]:
    started = Started()
    run = ConfigurationRun(1, RetrievalConfig(PARAMS), EngineSettings(), start_process=started)  # type: ignore[arg-type]
    run.start()
    return run, started


def cut(run: ConfigurationRun, params: WindowParams = PARAMS) -> list[str]:
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    window_set = cut_window_set(corpus, params)
    run.set_windows(corpus, window_set)
    return window_set.texts


def vectors(run: ConfigurationRun, rows: Sequence[int]) -> VectorsEmbedded:
    unit = np.zeros((len(rows), DIMENSION), dtype=np.float32)
    unit[:, 0] = 1.0
    extents = tuple(ReadingExtent(10, 10) for _ in rows)
    return VectorsEmbedded(run.generation, tuple(rows), unit, extents)


def test_windows_go_to_the_process_once_and_the_index_waits_for_the_model() -> None:
    run, started = new_run()
    texts = cut(run)
    [process] = started.processes
    assert process.sent == [(1, texts, ())], "sent at once, before the model is ready"
    assert run.index is None and run.window_count == len(texts)
    run.model_ready(READY)
    assert run.index is not None and run.index.window_count == len(texts)
    assert len(process.sent) == 1, "the texts travel once"


def test_vectors_of_a_window_set_replaced_since_are_dropped() -> None:
    run, _ = new_run()
    cut(run)
    run.model_ready(READY)
    late = vectors(run, [0, 1])
    run.recut(WindowParams(Unit.CHARS, 500, 50))
    assert run.window_count is None, "new settings: no window count until they are cut"
    assert not run.vectors_arrived(late)
    cut(run, WindowParams(Unit.CHARS, 500, 50))
    assert not run.vectors_arrived(late) and run.embedded_count == 0
    assert run.vectors_arrived(vectors(run, [0, 1])) and run.embedded_count == 2
    assert not run.windows_done(WindowsDone(run.generation - 1))


def test_the_cache_s_reply_is_awaited_until_every_vector_it_found_arrived() -> None:
    """The cache's vectors come in a burst after its lookup; a ranking of part of them is thrown
    away (at 100k windows one of 90k ran first, and the ranking of all of them waited for it)."""
    run, _ = new_run()
    cut(run)
    run.model_ready(READY)
    assert not run.cache_replying
    assert run.cache_looked_up(CacheLookedUp(run.generation, 5, run.window_count or 0, None))
    assert run.cache_replying
    run.vectors_arrived(vectors(run, [0, 1, 2]))
    assert run.cache_replying, "two of the five found are still on their way"
    run.vectors_arrived(vectors(run, [3, 4]))
    assert not run.cache_replying
    run.vectors_arrived(vectors(run, [5]))
    assert not run.cache_replying, "what the model embeds after is not the cache's"

    run.cache_looked_up(CacheLookedUp(run.generation, 4, run.window_count or 0, None))
    run.recut(WindowParams(Unit.CHARS, 500, 50))
    assert not run.cache_replying, "a reply for a window set replaced is not awaited"
    cut(run, WindowParams(Unit.CHARS, 500, 50))
    run.cache_looked_up(CacheLookedUp(run.generation, 4, run.window_count or 0, None))
    assert run.process_ended(run.incarnation, now=0.0) is ProcessOutcome.RESTARTED
    assert not run.cache_replying, "a process that died sends no more: its successor looks up again"


@pytest.mark.parametrize("outcome", [ProcessOutcome.MODEL_FAILED, ProcessOutcome.GAVE_UP])
def test_a_process_that_ends_for_good_mid_reply_leaves_nothing_awaited(outcome: ProcessOutcome) -> None:
    """Else every later ranking waited for vectors no process would send: hits of what was embedded
    are still ranked, as the app says they are."""
    run, _ = new_run()
    cut(run)
    run.model_ready(READY)
    if outcome is ProcessOutcome.MODEL_FAILED:
        run.model_failed("the model could not be read")
    else:
        for death in range(RESTART_LIMIT):
            assert run.process_ended(run.incarnation, now=float(death)) is ProcessOutcome.RESTARTED
            run.model_ready(READY)
    run.cache_looked_up(CacheLookedUp(run.generation, 5, run.window_count or 0, None))
    run.vectors_arrived(vectors(run, [0, 1]))
    assert run.process_ended(run.incarnation, now=5.0) is outcome
    assert not run.cache_replying and run.embedded_count == 2


def test_a_process_that_dies_is_replaced_and_sent_the_windows_again() -> None:
    run, started = new_run()
    texts = cut(run)
    run.model_ready(READY)
    run.vectors_arrived(vectors(run, [0, 1, 2]))
    assert run.process_ended(run.incarnation, now=0.0) is ProcessOutcome.RESTARTED
    first, second = started.processes
    assert first.closed and run.process is second and run.incarnation == 2
    assert second.sent == [], "the new process is sent the windows once its engine is open"
    run.model_ready(READY)
    assert second.sent == [(run.generation, texts, ())]
    assert run.embedded_count == 3, "what was embedded stays ranked"
    assert run.process_ended(1, now=1.0) is ProcessOutcome.ALREADY_REPLACED, "an old process's end"
    assert run.process is second


def test_a_process_that_keeps_dying_is_given_up_until_restarted() -> None:
    run, started = new_run()
    cut(run)
    outcomes = [run.process_ended(run.incarnation, now=float(n)) for n in range(RESTART_LIMIT + 1)]
    assert outcomes == [ProcessOutcome.RESTARTED] * RESTART_LIMIT + [ProcessOutcome.GAVE_UP]
    assert run.stopped and run.process is None and len(started.processes) == RESTART_LIMIT + 1
    assert run.ask(1, "a question") is None, "a stopped run cannot embed a question"
    assert run.restart() and not run.stopped and run.process is started.processes[-1]
    assert not run.restart(), "a running run is not restarted"


def test_a_failed_model_is_not_started_again() -> None:
    run, started = new_run()
    run.model_failed("no such model")
    assert run.process_ended(run.incarnation, now=0.0) is ProcessOutcome.MODEL_FAILED
    assert run.stopped and run.failure == "no such model" and len(started.processes) == 1


def test_a_question_is_asked_once_by_number_and_again_of_a_new_process() -> None:
    run, started = new_run()
    first = run.ask(1, "how are jobs retried")
    assert first is not None and run.ask(1, "how are jobs retried") is first
    second = run.ask(2, "how are jobs retried")
    assert second is not None and second is not first, "the same words asked again are a new question"
    process = started.processes[0]
    assert [text for text, _ in process.queries] == ["how are jobs retried"] * 2
    second.vector.set_exception(RuntimeError("the process died"))
    assert not second.is_asked()
    again = run.ask(2, "how are jobs retried")
    assert again is not None and again is not second and again.number == 2


@pytest.mark.parametrize("path", ["docs/queues.md", "no/such/file.md"])
def test_embed_next_names_only_the_rows_still_waiting(path: str) -> None:
    run, started = new_run()
    cut(run)
    run.model_ready(READY)
    rows = list(run.file_rows.get(path, range(0)))
    if rows:
        run.vectors_arrived(vectors(run, rows[:1]))
    run.embed_next(path)
    expected = [(run.generation, rows[1:])] if rows[1:] else []
    assert started.processes[0].first == expected
    assert [w.path for w in run.file_windows(path)] == [path] * len(rows)


def test_the_open_file_is_embedded_first_with_the_new_window_set_and_after_a_restart() -> None:
    run, started = new_run()
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    run.set_windows(corpus, cut_window_set(corpus, PARAMS), "docs/queues.md")
    first = tuple(run.file_rows["docs/queues.md"])
    assert started.processes[0].sent[0][2] == first
    run.model_ready(READY)
    run.vectors_arrived(vectors(run, first[:1]))
    run.embed_next("docs/retries.md")
    run.process_ended(run.incarnation, now=0.0)
    run.model_ready(READY)
    assert started.processes[1].sent[0][2] == tuple(run.file_rows["docs/retries.md"]), (
        "the file on screen now"
    )


def test_a_restart_while_new_settings_are_cut_sends_only_the_new_windows() -> None:
    run, started = new_run()
    cut(run)
    run.model_ready(READY)
    run.recut(WindowParams(Unit.CHARS, 500, 50))
    run.process_ended(run.incarnation, now=0.0)
    run.model_ready(READY)
    assert started.processes[1].sent == [], "the old set is not sent while the new one is cut"
    texts = cut(run, WindowParams(Unit.CHARS, 500, 50))
    assert started.processes[1].sent == [(run.generation, texts, ())]
