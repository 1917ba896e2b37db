"""The bookkeeping that fills an index from the cache and from window requests."""

from __future__ import annotations

from typing import Any

import numpy as np

from raglens.embedding_events import ReadingExtent, VectorsEmbedded
from raglens.index import VectorIndex
from raglens.pipeline import CacheLookup
from raglens.ui.index_feed import IndexFeed
from raglens.vector_cache import CachedVector
from raglens.windows import Unit, Window


class RecordingProcess:
    """Stands in for the embedding process: records requests and cancellations."""

    def __init__(self) -> None:
        self.requests: list[list[str]] = []
        self.cancelled: list[int] = []

    def embed_windows(self, texts: list[str]) -> int:
        self.requests.append(texts)
        return len(self.requests)

    def cancel(self, request_id: int) -> None:
        self.cancelled.append(request_id)


def make_feed() -> tuple[IndexFeed, RecordingProcess]:
    windows = [Window("a.md" if row < 3 else "b.md", Unit.CHARS, row % 3, 0, 1, 1, 1) for row in range(6)]
    process = RecordingProcess()
    file_rows = {"a.md": range(0, 3), "b.md": range(3, 6)}
    feed = IndexFeed(VectorIndex(windows, 2), [f"t{row}" for row in range(6)], file_rows, process)  # type: ignore[arg-type]
    return feed, process


def batch(request_id: int, start: int, count: int) -> VectorsEmbedded:
    vectors = np.tile(np.array([[1.0, 0.0]], dtype=np.float32), (count, 1))
    return VectorsEmbedded(request_id, start, vectors, tuple(ReadingExtent(1, 1) for _ in range(count)))


def test_cached_rows_are_filled_and_the_file_in_view_is_asked_for_first() -> None:
    feed, process = make_feed()
    cached: Any = CachedVector(np.array([0.0, 1.0], dtype=np.float32), ReadingExtent(2, 2), 0.0)
    lookup = CacheLookup([None, cached, None, None, cached, None], None, [])
    missing = feed.fill_from_cache(lookup)
    assert (missing, feed.from_cache, feed.index.embedded_count) == ([0, 2, 3, 5], 2, 2)
    feed.request(missing, first="b.md")
    assert process.requests == [["t3", "t5", "t0", "t2"]]
    assert feed.accept(batch(1, 0, 2)) == [3, 5]


def test_a_file_opened_mid_request_jumps_the_queue_and_late_batches_still_land() -> None:
    feed, process = make_feed()
    feed.request(list(range(6)))
    assert feed.accept(batch(1, 0, 2)) == [0, 1]
    feed.embed_next("b.md")
    assert process.cancelled == [1]
    assert process.requests[-1] == ["t3", "t4", "t5", "t2"]
    assert feed.accept(batch(1, 2, 1)) == [2], "the superseded request's batch in flight still counts"
    feed.embed_next("b.md")
    assert len(process.requests) == 2, "already first in line"
    assert feed.accept(batch(2, 0, 4)) == [3, 4, 5, 2]
    assert feed.index.is_complete
    feed.finished(1)
    assert feed.accept(batch(1, 3, 1)) is None, "nothing more lands once the index is complete"
