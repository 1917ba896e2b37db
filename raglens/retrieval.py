"""What ranks a configuration's windows for a query: an embedding model's index, or BM25.

The headless commands score and rank through this one shape, so a lexical baseline is a
configuration like any other: ``search``, ``probe``, ``eval``, ``--vs`` and every grid row take it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from raglens.attribution import Attribution, explain_with
from raglens.embedding import Embedder
from raglens.index import IndexSnapshot
from raglens.search import SearchResult, rank
from raglens.windows import Window


class Retriever(Protocol):
    """Scores every window of one configuration for a query."""

    @property
    def windows(self) -> Sequence[Window]: ...

    @property
    def window_count(self) -> int: ...

    def scores(self, query: str) -> np.ndarray:
        """The score of every window for ``query``, in corpus order; -inf for one not retrieved."""
        ...

    def search(self, query: str, k: int) -> SearchResult:
        """The ``k`` best windows for ``query``."""
        ...

    def explain(self, query: str, row: int, text: str) -> Attribution:
        """Window ``row``'s score for ``query`` taken apart into token shares (``text`` is its text)."""
        ...


@dataclass(frozen=True, eq=False)
class DenseRetriever:
    """An embedding model's complete index: the cosine of each window with the query's vector."""

    index: IndexSnapshot
    embedder: Embedder
    """The engine queries go through: the ONNX export when there is one (no torch)."""

    @property
    def windows(self) -> Sequence[Window]:
        return self.index.windows

    @property
    def window_count(self) -> int:
        return self.index.window_count

    def scores(self, query: str) -> np.ndarray:
        return self.index.dot(self.embedder.encode_query(query))

    def search(self, query: str, k: int) -> SearchResult:
        return rank(self.index, self.embedder.encode_query(query), k)

    def explain(self, query: str, row: int, text: str) -> Attribution:
        return explain_with(self.embedder, query, text)
