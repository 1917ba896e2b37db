"""The one index builder: embeds the windows without a vector, batch by batch, each batch cached as made.

The CLI drives it in its own process; the explorer drives it inside the embedding process, between
queries. Either way a batch is embedded, measured (how much of each window the model reads) and
stored in the vector cache in one place, and the rows of the file in view can jump the queue.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from raglens.embedding import DEFAULT_BATCH_SIZE, Embedder, worker_count
from raglens.embedding_events import ReadingExtent
from raglens.vector_cache import CachedVector, ModelCache

SORTED_AHEAD = 128
"""Distinct texts measured ahead of the batches and put in order of the tokens the model reads: a
batch of like lengths pads less. Batches of 8 code windows ran 25.4-25.9 windows/s in file order and
27.6-27.9 in runs of 128 so ordered (onnxruntime, 2 cores); a run's measuring is ~25 ms of tokenising,
which the batches then need not do (they need each text's extent anyway)."""


@dataclass(frozen=True, eq=False)
class EmbeddedBatch:
    """The vectors of some windows, by their rows in the index."""

    rows: tuple[int, ...]
    vectors: np.ndarray
    """Unit float32 rows, one per entry of ``rows``."""
    extents: tuple[ReadingExtent, ...]
    """How much of each window the model read."""


def cached_batch(entries: Sequence[CachedVector | None]) -> EmbeddedBatch:
    """The vectors a cache lookup found, by row, as one batch (empty when it found none).

    Rows that hold one text share one entry (the lookup finds it once): each entry's vector is
    stacked once and the rows take theirs by position. Stacking a vector a row took 0.34 s of a warm
    start at 100k windows, which every first ranking waits for.
    """
    rows = tuple(row for row, entry in enumerate(entries) if entry is not None)
    if not rows:
        return EmbeddedBatch((), np.zeros((0, 0), np.float32), ())
    found = [entry for entry in entries if entry is not None]
    position_of: dict[int, int] = {}
    distinct: list[np.ndarray] = []
    for entry in found:
        if id(entry) not in position_of:
            position_of[id(entry)] = len(distinct)
            distinct.append(entry.vector)
    positions = np.fromiter((position_of[id(entry)] for entry in found), dtype=np.intp, count=len(found))
    return EmbeddedBatch(rows, np.stack(distinct)[positions], tuple(entry.extent for entry in found))


class IndexBuilder:
    """The rows still to embed, in the order they will be embedded, and the embedding of each batch.

    Rows whose windows hold the same text (a copied file, a licence header, a vendored folder) are
    embedded once: the model gives one text one vector, and every row holding it gets that vector in
    the batch that embeds it.
    """

    def __init__(
        self,
        texts: Sequence[str],
        rows: Iterable[int],
        engine: Callable[[int], Embedder],
        *,
        cache: ModelCache | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        """``texts`` holds every window's text by row; ``rows`` are those to embed, in order.

        ``engine`` opens the embedder for a number of distinct texts, on the first batch only: a
        builder with nothing to embed never loads a model.
        """
        if batch_size <= 0:
            raise ValueError(f"batch size must be positive, got {batch_size}")
        self._texts = texts
        first_row_of: dict[str, int] = {}
        self._twins: dict[int, list[int]] = {}
        """The other rows holding the text of a row that is embedded (only where there are some)."""
        self._embedded_with: dict[int, int] = {}
        """A twin's row -> the row whose embedding gives it its vector."""
        order = []
        for row in dict.fromkeys(rows):
            first = first_row_of.setdefault(texts[row], row)
            if first == row:
                order.append(row)
            else:
                self._twins.setdefault(first, []).append(row)
                self._embedded_with[row] = first
        self._order = order
        self._next = 0
        self._ordered_until = 0
        """``_order[_next:_ordered_until]`` is measured, in the order it will be embedded."""
        self._measured: dict[int, ReadingExtent] = {}
        """The extents of rows measured ahead and not embedded yet."""
        self._prioritized_until = 0
        """The end of the rows asked for first, embedded in the order given, not by length."""
        self._pending = len(order) + len(self._embedded_with)
        self._engine = engine
        self._embedder: Embedder | None = None
        self._cache = cache
        self._batch_size = batch_size

    @property
    def pending_count(self) -> int:
        """How many rows are still to get their vector."""
        return self._pending

    @property
    def texts_to_embed(self) -> int:
        """How many distinct texts are still to embed (what the engine is chosen for)."""
        return len(self._order) - self._next

    def pending_rows(self) -> list[int]:
        """The rows still to get their vector, in the order they are queued (runs not measured yet
        are put in order of length when they are reached)."""
        return [twin for row in self._order[self._next :] for twin in (row, *self._twins.get(row, ()))]

    def prioritize(self, rows: Iterable[int]) -> None:
        """Embed those of ``rows`` still pending next, in the order given; the rest keep their order."""
        pending = self._order[self._next :]
        waiting = set(pending)
        embedded = (self._embedded_with.get(row, row) for row in rows)
        first = [row for row in dict.fromkeys(embedded) if row in waiting]
        if not first:
            return
        chosen = set(first)
        self._order = first + [row for row in pending if row not in chosen]
        self._next = 0
        self._ordered_until = 0
        self._prioritized_until = len(first)

    def next_batch(self) -> EmbeddedBatch | None:
        """Embed the next batch of distinct texts and store it in the cache; None when every row is done.

        The batch holds every row of those texts, twins after the row they share a text with.
        """
        if self._next >= len(self._order):
            return None
        if self._embedder is None:
            self._embedder = self._engine(self.texts_to_embed)
        # A pool of processes gets a batch for each: one batch split between them idles all but one.
        size = self._batch_size * worker_count(self._embedder)
        if self._next >= self._ordered_until:
            self._measure_ahead(self._embedder, max(size, SORTED_AHEAD))
        rows = self._order[self._next : min(self._next + size, self._ordered_until)]
        texts = [self._texts[row] for row in rows]
        vectors = self._embedder.encode(texts)
        extents = [self._measured.pop(row) for row in rows]
        if self._cache is not None:
            self._cache.store(texts, vectors, extents)
        self._next += len(rows)
        copies = [1 + len(self._twins.get(row, ())) for row in rows]
        every_row = tuple(twin for row in rows for twin in (row, *self._twins.get(row, ())))
        self._pending -= len(every_row)
        if len(every_row) == len(rows):
            return EmbeddedBatch(every_row, vectors, tuple(extents))
        repeated = tuple(extent for extent, count in zip(extents, copies, strict=True) for _ in range(count))
        return EmbeddedBatch(every_row, np.repeat(vectors, copies, axis=0), repeated)

    def _measure_ahead(self, embedder: Embedder, count: int) -> None:
        """Measure the next ``count`` queued texts and order them by the tokens the model reads
        (stable: equal lengths keep their order); rows asked for first keep the order given."""
        start = self._next
        prioritized = start < self._prioritized_until
        end = min(self._prioritized_until if prioritized else start + count, len(self._order))
        rows = self._order[start:end]
        unmeasured = [row for row in rows if row not in self._measured]
        extents = embedder.reading_extents([self._texts[row] for row in unmeasured])
        self._measured.update(zip(unmeasured, extents, strict=True))
        if not prioritized:
            limit = embedder.max_seq_length
            rows.sort(
                key=lambda row: (
                    self._measured[row].token_count
                    if limit is None
                    else min(self._measured[row].token_count, limit)
                )
            )
            self._order[start:end] = rows
        self._ordered_until = end

    @property
    def embedder(self) -> Embedder | None:
        """The embedder the batches went through, once the first batch opened it."""
        return self._embedder
