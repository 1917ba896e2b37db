"""The embedding process protocol, driven with a fake embedder so no test here imports torch."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from raglens.embedding_events import (
    ModelFailed,
    ModelReady,
    ProcessEnded,
    ProcessEvent,
    QueryEmbedded,
    RequestCancelled,
    VectorsEmbedded,
    WindowsDone,
)
from raglens.embedding_process import EmbeddingProcess
from raglens.errors import ModelLoadError
from tests.fakes import HashingEmbedder

EVENT_TIMEOUT_S = 30.0


@pytest.fixture
def fake_process() -> Iterator[EmbeddingProcess]:
    process = EmbeddingProcess(factory="tests.fakes:SlowHashingEmbedder", batch_size=4)
    yield process
    process.close()


def events_until(process: EmbeddingProcess, last: type, request_id: int) -> list[ProcessEvent]:
    """Every event up to and including the first ``last`` event of ``request_id``; fails on a stall."""
    seen: list[ProcessEvent] = []
    while True:
        event = process.next_event(timeout=EVENT_TIMEOUT_S)
        assert event is not None, f"no event within {EVENT_TIMEOUT_S} s; so far {seen}"
        seen.append(event)
        if isinstance(event, last) and getattr(event, "request_id", None) == request_id:
            return seen
        assert not isinstance(event, ProcessEnded), f"the process ended early: {seen}"


def test_windows_stream_back_in_order_with_the_embedders_vectors(fake_process: EmbeddingProcess) -> None:
    ready = fake_process.wait_until_ready(timeout=EVENT_TIMEOUT_S)
    assert ready == ModelReady("fake-hashing", 64, 128, "cpu")
    texts = [f"window number {i} about queues" for i in range(10)]
    request = fake_process.embed_windows(texts)
    events = events_until(fake_process, WindowsDone, request)
    batches = [e for e in events if isinstance(e, VectorsEmbedded)]
    assert [(b.start, len(b.vectors)) for b in batches] == [(0, 4), (4, 4), (8, 2)]
    streamed = np.concatenate([b.vectors for b in batches])
    np.testing.assert_array_equal(streamed, HashingEmbedder().encode(texts))
    extents = [extent for batch in batches for extent in batch.extents]
    assert extents == HashingEmbedder().reading_extents(texts)


def test_a_query_overtakes_a_long_window_request(fake_process: EmbeddingProcess) -> None:
    fake_process.wait_until_ready(timeout=EVENT_TIMEOUT_S)
    windows = fake_process.embed_windows(["some window text"] * 200)
    query = fake_process.embed_query("where is the queue drained?")
    events = events_until(fake_process, QueryEmbedded, query)
    assert not any(isinstance(e, WindowsDone) for e in events), "the query waited for the whole index"
    answered = events[-1]
    assert isinstance(answered, QueryEmbedded)
    expected = HashingEmbedder().encode_query("where is the queue drained?")
    np.testing.assert_array_equal(answered.vector, expected)
    fake_process.cancel(windows)


def test_a_cancelled_request_stops_streaming(fake_process: EmbeddingProcess) -> None:
    fake_process.wait_until_ready(timeout=EVENT_TIMEOUT_S)
    request = fake_process.embed_windows(["text"] * 400)
    first = fake_process.next_event(timeout=EVENT_TIMEOUT_S)
    assert isinstance(first, VectorsEmbedded)
    fake_process.cancel(request)
    events = events_until(fake_process, RequestCancelled, request)
    streamed = sum(len(e.vectors) for e in [first, *events] if isinstance(e, VectorsEmbedded))
    assert streamed < 400
    follow_up = fake_process.embed_query("still alive?")
    after_cancel = events_until(fake_process, QueryEmbedded, follow_up)
    assert not any(isinstance(e, VectorsEmbedded) and e.request_id == request for e in after_cancel)


def test_a_model_that_fails_to_load_is_one_clear_error() -> None:
    process = EmbeddingProcess(factory="tests.fakes:failing_embedder")
    try:
        with pytest.raises(ModelLoadError, match="cannot be loaded \\(on purpose\\)"):
            process.wait_until_ready(timeout=EVENT_TIMEOUT_S)
        assert isinstance(process.next_event(timeout=EVENT_TIMEOUT_S), ProcessEnded)
    finally:
        process.close()


def test_a_model_failing_mid_stream_says_why_then_ends() -> None:
    process = EmbeddingProcess(factory="tests.fakes:BreakingHashingEmbedder", batch_size=2)
    try:
        process.wait_until_ready(timeout=EVENT_TIMEOUT_S)
        process.embed_windows(["fine", "fine", "BREAK here", "never"])
        events = [process.next_event(timeout=EVENT_TIMEOUT_S) for _ in range(3)]
        assert isinstance(events[0], VectorsEmbedded)
        assert events[1] == ModelFailed("RuntimeError: the fake model broke")
        assert isinstance(events[2], ProcessEnded)
    finally:
        process.close()


def test_a_killed_process_is_reported_as_ended(fake_process: EmbeddingProcess) -> None:
    fake_process.wait_until_ready(timeout=EVENT_TIMEOUT_S)
    fake_process._process.kill()
    event = fake_process.next_event(timeout=EVENT_TIMEOUT_S)
    assert isinstance(event, ProcessEnded)
    assert event.exit_code is not None and event.exit_code != 0
