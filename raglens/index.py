"""The vector index: every window of a corpus and, row for row, the vectors embedded so far."""

from __future__ import annotations

import mmap
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from raglens.embedding_events import ReadingExtent
from raglens.windows import Window, WindowColumns, as_columns

if TYPE_CHECKING:
    from raglens.stored_index import StoredIndex

FAULT_IN_BYTES = 4 << 20
"""The matrix's pages faulted in per call: 1-2 ms each here, holding the GIL."""
MADV_POPULATE_WRITE = getattr(mmap, "MADV_POPULATE_WRITE", 23 if sys.platform == "linux" else None)
"""Linux (5.14 on) backs a range's pages writable without changing them; Python 3.11 does not name it."""


class VectorIndex:
    """Windows plus one (n, d) float32 array whose rows fill in any order, so a partial index ranks.

    Rows arrive from the cache all at once and from the model batch by batch, the file in view first.
    A lexical run's index (BM25) has dimension 0: rows and reading extents, no vectors; each of its
    questions comes with every window's score instead (see :func:`raglens.search.rank_answer`).
    """

    def __init__(self, windows: Sequence[Window], dimension: int) -> None:
        if dimension < 0:
            raise ValueError(f"vector dimension must not be negative, got {dimension}")
        self.windows: WindowColumns = as_columns(windows)
        """Every window of the corpus in corpus order; row i of the matrix belongs to window i (the set
        given, where it came as columns: a ranking is of a set when it is that very set)."""
        self.dimension = dimension
        size = len(self.windows) * dimension * 4
        # Its own anonymous mapping, zeroed, which fault_in can back ahead of the rows' arrival.
        self._mapping = _private_mapping(size) if size else None
        self._vectors = (
            np.frombuffer(self._mapping, dtype=np.float32).reshape(len(self.windows), dimension)
            if self._mapping is not None
            else np.zeros((len(self.windows), dimension), dtype=np.float32)
        )
        self._filled = np.zeros(len(self.windows), dtype=bool)
        # Two integers a row, not an object a row: 100k extent objects were 100k more for every full
        # garbage collection to scan (the explorer's collections ran 0.1 s at 100k windows).
        self._token_counts = np.full(len(self.windows), -1, dtype=np.int64)
        """Each row's ReadingExtent.token_count; -1 where its extent is not known."""
        self._chars_read = np.zeros(len(self.windows), dtype=np.int64)
        self._embedded_count = 0

    @classmethod
    def from_stored(cls, windows: Sequence[Window], stored: StoredIndex) -> VectorIndex:
        """The complete index ``stored`` for ``windows`` (row for row), its vectors read where they lie."""
        if stored.window_count != len(windows):
            raise ValueError(f"a stored index of {stored.window_count} rows for {len(windows)} windows")
        index = cls(windows, 0)
        index.dimension = int(stored.vectors.shape[1])
        index._vectors = stored.vectors
        index._filled = np.ones(len(windows), dtype=bool)
        index._token_counts = np.asarray(stored.token_counts, dtype=np.int64)
        index._chars_read = np.asarray(stored.chars_read, dtype=np.int64)
        index._embedded_count = len(windows)
        return index

    def fault_in(self, cancelled: Callable[[], bool] = lambda: False) -> bool:
        """Have the system back every page of the matrix now, a few MiB a call, changing no value;
        False where it cannot (an index without a mapping of its own, a system without
        MADV_POPULATE_WRITE) or once ``cancelled()`` holds.

        For a thread beside the one that fills: the first write to each page of the fresh matrix
        faults it in, and at 100k windows the cache's vectors arrive in parts whose rows spread over
        the whole matrix, so each part's fill spent 25-30 ms of the event loop in page faults (0.3 s
        for the first where the kernel made huge pages). Values written meanwhile are kept.
        """
        mapping = self._mapping
        if mapping is None or MADV_POPULATE_WRITE is None or not hasattr(mapping, "madvise"):
            return False
        for start in range(0, len(mapping), FAULT_IN_BYTES):
            if cancelled():
                return False
            try:
                mapping.madvise(MADV_POPULATE_WRITE, start, min(FAULT_IN_BYTES, len(mapping) - start))
            except (OSError, ValueError):
                return False  # an older kernel (EINVAL), or a mapping closed under it
        return True

    @property
    def maps_its_own_memory(self) -> bool:
        """Whether the matrix is this index's own mapping (not a stored index's file, nor empty)."""
        return self._mapping is not None

    def stored_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The vectors, token counts and characters read of every row, as they are kept (not copies)."""
        return self._vectors, self._token_counts, self._chars_read

    @property
    def window_count(self) -> int:
        """How many windows the corpus has, embedded or not."""
        return len(self.windows)

    @property
    def embedded_count(self) -> int:
        """How many windows have a vector."""
        return self._embedded_count

    @property
    def is_complete(self) -> bool:
        """Whether every window has its vector."""
        return self._embedded_count == len(self.windows)

    def has_vector(self, row: int) -> bool:
        return bool(self._filled[row])

    def snapshot(self) -> IndexSnapshot:
        """The rows embedded so far and their vectors, safe to rank in another thread while this fills.

        Nothing is copied but the list of rows: a filled row never changes (``fill`` skips it), so the
        snapshot's rows of the shared matrix stay as they were, whatever is filled after.
        """
        rows = np.arange(len(self.windows)) if self.is_complete else np.flatnonzero(self._filled)
        rows.flags.writeable = False
        storage = self._vectors.view()
        storage.flags.writeable = False
        return IndexSnapshot(self.windows, self.dimension, rows, storage)

    def extents_known(self) -> bool:
        """Whether every window's reading extent is known."""
        return bool((self._token_counts >= 0).all())

    def extent(self, row: int) -> ReadingExtent | None:
        """How much of window ``row`` the model read, when the embedder reported it."""
        tokens = int(self._token_counts[row])
        return ReadingExtent(tokens, int(self._chars_read[row])) if tokens >= 0 else None

    def fill(
        self, rows: Sequence[int], vectors: np.ndarray, extents: Sequence[ReadingExtent] | None = None
    ) -> None:
        """Store the vectors (and, if known, the reading extents) of windows ``rows`` not filled yet.

        Rows in ``rows`` that already have a vector keep it.
        """
        if len(rows) == 0 and vectors.size == 0 and not extents:
            return
        if vectors.ndim != 2 or vectors.shape != (len(rows), self.dimension):
            raise ValueError(
                f"expected vectors of shape ({len(rows)}, {self.dimension}), got {vectors.shape}"
            )
        if extents is not None and len(extents) != len(rows):
            raise ValueError(f"{len(extents)} reading extents for {len(rows)} vectors")
        positions = np.asarray(rows, dtype=np.intp)
        if len(positions) and (positions.min() < 0 or positions.max() >= len(self.windows)):
            raise ValueError(f"rows outside an index of {len(self.windows)} windows")
        fresh = ~self._filled[positions]
        if not fresh.any():
            return  # (a stored index's vectors are read-only: nothing may be written to them)
        if not fresh.all():
            # A filled row never changes, so that snapshots taken before stay true without a copy.
            positions, vectors = positions[fresh], vectors[fresh]
            extents = (
                [extent for extent, new in zip(extents, fresh, strict=True) if new] if extents else extents
            )
        self._vectors[positions] = vectors
        self._embedded_count += len(positions)
        self._filled[positions] = True
        if extents:
            self._token_counts[positions] = [extent.token_count for extent in extents]
            self._chars_read[positions] = [extent.chars_read for extent in extents]


def _private_mapping(size: int) -> mmap.mmap:
    """``size`` bytes of zeroed memory of this process's own (private, not shared), as a mapping."""
    if hasattr(mmap, "MAP_PRIVATE"):
        return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    return mmap.mmap(-1, size)  # Windows: the system's paging file


@dataclass(frozen=True, eq=False)
class IndexSnapshot:
    """The windows and the rows embedded at one moment: what a ranking reads, immutable."""

    windows: WindowColumns
    """Every window of the corpus in corpus order, embedded or not."""
    dimension: int
    rows: np.ndarray
    """The embedded rows, ascending (read-only)."""
    storage: np.ndarray
    """The index's whole (n, d) matrix, read-only; only ``rows`` are meaningful, and they never change."""

    @property
    def window_count(self) -> int:
        """How many windows the corpus has, embedded or not."""
        return len(self.windows)

    @property
    def embedded_count(self) -> int:
        """How many windows had a vector when the snapshot was taken."""
        return len(self.rows)

    @property
    def is_complete(self) -> bool:
        """Whether every window had its vector."""
        return len(self.rows) == len(self.windows)

    def embedded_rows(self) -> np.ndarray:
        """The rows that have a vector, ascending."""
        return self.rows

    @property
    def vectors(self) -> np.ndarray:
        """The vectors of the embedded rows, in row order (read-only; a copy while incomplete)."""
        if self.is_complete:
            return self.storage
        vectors: np.ndarray = self.storage[self.rows]
        vectors.flags.writeable = False
        return vectors

    def dot(self, query: np.ndarray) -> np.ndarray:
        """Every row's dot product with ``query``; only the embedded rows' products mean anything.

        Rows not embedded score 0 while nothing fills them, and anything once a fill races this product:
        pick the embedded rows out with ``rows``.
        """
        product: np.ndarray = self.storage @ query
        return product
