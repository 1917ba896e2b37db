"""The embedding process protocol, driven with a fake embedder so no test here imports torch."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import numpy as np
import pytest

from raglens.embedding_events import (
    CacheLookedUp,
    ModelChoice,
    ModelFailed,
    ModelReady,
    ProcessEnded,
    ProcessEvent,
    VectorsEmbedded,
    WindowsDone,
)
from raglens.embedding_process import EmbeddingProcess
from raglens.errors import ModelLoadError
from tests.fakes import HashingEmbedder

EVENT_TIMEOUT_S = 30.0


def fake(factory: str = "SlowHashingEmbedder") -> ModelChoice:
    return ModelChoice(factory=f"tests.fakes:{factory}")


@pytest.fixture
def fake_process() -> Iterator[EmbeddingProcess]:
    process = EmbeddingProcess(fake(), batch_size=4)
    yield process
    process.close()


def events_until(process: EmbeddingProcess, last: type, generation: int | None = None) -> list[ProcessEvent]:
    """Every event up to and including the first ``last`` event (of ``generation``); fails on a stall."""
    seen: list[ProcessEvent] = []
    while True:
        event = process.next_event(timeout=EVENT_TIMEOUT_S)
        assert event is not None, f"no event within {EVENT_TIMEOUT_S} s; so far {seen}"
        seen.append(event)
        if isinstance(event, last) and getattr(event, "generation", generation) == generation:
            return seen
        assert not isinstance(event, ProcessEnded), f"the process ended early: {seen}"


def answered(process: EmbeddingProcess, future: Future[np.ndarray]) -> tuple[np.ndarray, list[ProcessEvent]]:
    """Relay events until ``future`` is resolved; its vector and the events seen meanwhile."""
    seen: list[ProcessEvent] = []
    while not future.done():
        event = process.next_event(timeout=EVENT_TIMEOUT_S)
        if event is not None:
            seen.append(event)
    return future.result(), seen


def test_windows_stream_back_by_row_with_the_embedders_vectors(fake_process: EmbeddingProcess) -> None:
    ready = fake_process.wait_until_ready(timeout=EVENT_TIMEOUT_S)
    assert (ready.name, ready.dimension, ready.max_seq_length, ready.precision) == (
        "fake-hashing",
        64,
        128,
        "fp32",
    )
    texts = [f"window number {i} about queues" for i in range(10)]
    fake_process.index_windows(1, texts)
    events = events_until(fake_process, WindowsDone, 1)
    batches = [e for e in events if isinstance(e, VectorsEmbedded)]
    assert [batch.rows for batch in batches] == [(0, 1, 2, 3), (4, 5, 6, 7), (8, 9)]
    streamed = np.concatenate([b.vectors for b in batches])
    np.testing.assert_array_equal(streamed, HashingEmbedder().encode(texts))
    extents = [extent for batch in batches for extent in batch.extents]
    assert extents == HashingEmbedder().reading_extents(texts)


def test_rows_asked_first_jump_the_queue_and_the_texts_travel_once(fake_process: EmbeddingProcess) -> None:
    fake_process.wait_until_ready(timeout=EVENT_TIMEOUT_S)
    texts = [f"window {i}" for i in range(40)]
    fake_process.index_windows(1, texts, first=[30, 31])
    first_batch = events_until(fake_process, VectorsEmbedded, 1)[-1]
    assert isinstance(first_batch, VectorsEmbedded)
    assert first_batch.rows[:2] == (30, 31)
    fake_process.embed_first(1, [20, 21, 22])
    events = events_until(fake_process, WindowsDone, 1)
    order = [row for event in events if isinstance(event, VectorsEmbedded) for row in event.rows]
    # The batch under way when the request arrived may finish first; then rows 20-22 come next.
    assert order.index(20) <= 4, order
    assert sorted([*first_batch.rows, *order]) == list(range(40)), "every row exactly once"


def test_a_query_overtakes_a_long_window_set(fake_process: EmbeddingProcess) -> None:
    fake_process.wait_until_ready(timeout=EVENT_TIMEOUT_S)
    fake_process.index_windows(1, ["some window text"] * 200)
    vector, seen = answered(fake_process, fake_process.embed_query("where is the queue drained?"))
    assert not any(isinstance(e, WindowsDone) for e in seen), "the query waited for the whole index"
    np.testing.assert_array_equal(vector, HashingEmbedder().encode_query("where is the queue drained?"))


def test_a_new_window_set_supersedes_the_one_under_way(fake_process: EmbeddingProcess) -> None:
    fake_process.wait_until_ready(timeout=EVENT_TIMEOUT_S)
    fake_process.index_windows(1, [f"text {row}" for row in range(400)])  # distinct: each embedded
    first = fake_process.next_event(timeout=EVENT_TIMEOUT_S)
    assert isinstance(first, VectorsEmbedded) and first.generation == 1
    fake_process.index_windows(2, ["other"] * 6)
    events = events_until(fake_process, WindowsDone, 2)
    old = sum(len(e.rows) for e in [first, *events] if isinstance(e, VectorsEmbedded) and e.generation == 1)
    assert old < 400
    assert not any(isinstance(e, WindowsDone) and e.generation == 1 for e in events)


def test_cached_windows_come_back_from_the_cache_and_only_the_rest_is_embedded(tmp_path: Path) -> None:
    texts = [f"cached window {i}" for i in range(6)]
    process = EmbeddingProcess(fake("HashingEmbedder"), cache_dir=str(tmp_path), batch_size=4)
    try:
        process.wait_until_ready(timeout=EVENT_TIMEOUT_S)
        process.index_windows(1, texts[:4])
        events_until(process, WindowsDone, 1)
    finally:
        process.close()
    again = EmbeddingProcess(fake("HashingEmbedder"), cache_dir=str(tmp_path), batch_size=4)
    try:
        again.wait_until_ready(timeout=EVENT_TIMEOUT_S)
        again.index_windows(1, texts)
        events = events_until(again, WindowsDone, 1)
    finally:
        again.close()
    looked_up = [e for e in events if isinstance(e, CacheLookedUp)]
    assert [(e.found, e.total) for e in looked_up] == [(4, 6)]
    batches = [e for e in events if isinstance(e, VectorsEmbedded)]
    assert [batch.rows for batch in batches] == [(0, 1, 2, 3), (4, 5)]
    np.testing.assert_array_equal(
        np.concatenate([b.vectors for b in batches]), HashingEmbedder().encode(texts)
    )


def test_a_model_that_fails_to_load_is_one_clear_error() -> None:
    process = EmbeddingProcess(fake("failing_embedder"))
    try:
        with pytest.raises(ModelLoadError, match="cannot be loaded \\(on purpose\\)"):
            process.wait_until_ready(timeout=EVENT_TIMEOUT_S)
        assert isinstance(process.next_event(timeout=EVENT_TIMEOUT_S), ProcessEnded)
    finally:
        process.close()


def test_a_model_failing_mid_stream_says_why_then_ends() -> None:
    process = EmbeddingProcess(fake("BreakingHashingEmbedder"), batch_size=2)
    try:
        process.wait_until_ready(timeout=EVENT_TIMEOUT_S)
        process.index_windows(1, ["fine one", "fine two", "BREAK here", "never"])
        events = [process.next_event(timeout=EVENT_TIMEOUT_S) for _ in range(3)]
        assert isinstance(events[0], VectorsEmbedded)
        assert events[1] == ModelFailed("RuntimeError: the fake model broke")
        assert isinstance(events[2], ProcessEnded)
    finally:
        process.close()


def test_a_killed_process_is_reported_as_ended_and_fails_its_queries(fake_process: EmbeddingProcess) -> None:
    ready = fake_process.wait_until_ready(timeout=EVENT_TIMEOUT_S)
    assert isinstance(ready, ModelReady)
    os.kill(fake_process.pid, signal.SIGKILL)
    event = fake_process.next_event(timeout=EVENT_TIMEOUT_S)
    assert isinstance(event, ProcessEnded)
    assert event.exit_code is not None and event.exit_code != 0
    with pytest.raises(ModelLoadError):
        fake_process.embed_query("anyone there?").result(timeout=EVENT_TIMEOUT_S)
