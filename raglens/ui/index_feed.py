"""The index being filled, and the bookkeeping of the window requests that fill it.

Plain state, no widgets: the app's handlers call it, on the UI thread only. Each request keeps
the index rows of its texts, so vectors of a superseded request still land where they belong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from raglens.embedding_events import VectorsEmbedded
    from raglens.embedding_process import EmbeddingProcess
    from raglens.index import VectorIndex
    from raglens.pipeline import CacheLookup


class IndexFeed:
    """Fills one index: from the cache at once, then from the embedding process, the file in view first."""

    def __init__(
        self,
        index: VectorIndex,
        texts: list[str],
        file_rows: Mapping[str, range],
        process: EmbeddingProcess,
    ) -> None:
        self.index = index
        self._texts = texts
        self._file_rows = file_rows
        self._process = process
        self._requests: dict[int, list[int]] = {}
        """The index rows of each request not yet done or cancelled, by position in it."""
        self._current: int | None = None
        self._prioritized: str | None = None
        self.from_cache = 0
        """How many rows came from the vector cache."""

    def fill_from_cache(self, lookup: CacheLookup | None) -> list[int]:
        """Give the index every vector the cache had; the rows the model must still embed."""
        if lookup is None:
            return list(range(self.index.window_count))
        from raglens.pipeline import fill_from_cache  # loaded by the corpus worker already

        missing = fill_from_cache(self.index, lookup.entries)
        self.from_cache = self.index.window_count - len(missing)
        return missing

    def request(self, rows: list[int], first: str | None = None) -> None:
        """Ask for the vectors of ``rows`` (those of file ``first`` ahead), instead of what was asked."""
        if first is not None and first in self._file_rows:
            self._prioritized = first
            mine = self._file_rows[first]
            rows = [row for row in rows if row in mine] + [row for row in rows if row not in mine]
        self.cancel()
        if rows:
            self._current = self._process.embed_windows([self._texts[row] for row in rows])
            self._requests[self._current] = rows

    def embed_next(self, path: str) -> None:
        """While indexing, move the unembedded windows of ``path`` to the front of the queue."""
        if self.index.is_complete or self._current is None or path == self._prioritized:
            return
        remaining = [row for row in self._requests.get(self._current, []) if not self.index.has_vector(row)]
        if any(row in self._file_rows.get(path, range(0)) for row in remaining):
            self.request(remaining, first=path)

    def accept(self, event: VectorsEmbedded) -> list[int] | None:
        """Put a batch into the index; the rows it filled, or None if it was not for this index."""
        requested = self._requests.get(event.request_id)
        if requested is None or self.index.is_complete:
            return None
        rows = requested[event.start : event.start + len(event.vectors)]
        self.index.fill(rows, event.vectors, event.extents)
        return rows

    def finished(self, request_id: int) -> None:
        """A request is done or cancelled: no more vectors of it will come."""
        self._requests.pop(request_id, None)

    def cancel(self) -> None:
        """Stop the request under way after its current batch."""
        if self._current is not None:
            self._process.cancel(self._current)
        self._current = None
