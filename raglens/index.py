"""The vector index: every window of a corpus and, row for row, the vectors embedded so far."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from raglens.embedding_events import ReadingExtent
from raglens.windows import Window


class VectorIndex:
    """Windows plus one (n, d) float32 array, filled batch by batch so a partial index can be ranked."""

    def __init__(self, windows: Sequence[Window], dimension: int) -> None:
        if dimension <= 0:
            raise ValueError(f"vector dimension must be positive, got {dimension}")
        self.windows: tuple[Window, ...] = tuple(windows)
        """Every window of the corpus in corpus order; row i of the matrix belongs to window i."""
        self.dimension = dimension
        self._vectors = np.zeros((len(self.windows), dimension), dtype=np.float32)
        self._extents: list[ReadingExtent | None] = [None] * len(self.windows)
        self._embedded_count = 0

    @property
    def window_count(self) -> int:
        """How many windows the corpus has, embedded or not."""
        return len(self.windows)

    @property
    def embedded_count(self) -> int:
        """How many windows, from the first, have a vector."""
        return self._embedded_count

    @property
    def is_complete(self) -> bool:
        """Whether every window has its vector."""
        return self._embedded_count == len(self.windows)

    @property
    def vectors(self) -> np.ndarray:
        """The vectors embedded so far, one row per window, as a read-only view."""
        view = self._vectors[: self._embedded_count]
        view.flags.writeable = False
        return view

    def extent(self, row: int) -> ReadingExtent | None:
        """How much of window ``row`` the model read, when the embedder reported it."""
        return self._extents[row]

    def append(self, batch: np.ndarray, extents: Sequence[ReadingExtent] | None = None) -> None:
        """Store the vectors (and, if known, the reading extents) of the next ``len(batch)`` windows."""
        if batch.ndim != 2 or batch.shape[1] != self.dimension:
            raise ValueError(f"expected vectors of shape (m, {self.dimension}), got {batch.shape}")
        end = self._embedded_count + batch.shape[0]
        if end > len(self.windows):
            raise ValueError(
                f"{end} vectors for an index of {len(self.windows)} windows: too many were appended"
            )
        if extents is not None and len(extents) != batch.shape[0]:
            raise ValueError(f"{len(extents)} reading extents for {batch.shape[0]} vectors")
        self._vectors[self._embedded_count : end] = batch
        if extents is not None:
            self._extents[self._embedded_count : end] = extents
        self._embedded_count = end
