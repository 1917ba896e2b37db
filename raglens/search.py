"""Rank windows by cosine similarity: one dot product over every row, exact top-k, no floor."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from raglens.errors import BadInputError
from raglens.index import IndexSnapshot
from raglens.windows import Window


@dataclass(frozen=True)
class Hit:
    """One ranked window."""

    rank: int
    """1 for the best hit."""
    score: float
    """Cosine similarity with the query, on the absolute scale -1..1 (a BM25 score in a lexical run)."""
    window: Window
    row: int
    """The window's row in the index."""


@dataclass(frozen=True, eq=False)
class SearchResult:
    """The top-k hits of one query and the score of every window that was ranked."""

    hits: tuple[Hit, ...]
    scores: np.ndarray
    """The score of each ranked row, in row order (for score distributions)."""
    ranked_rows: np.ndarray
    """The row of each score: every row once the index is complete, those embedded before that."""
    window_count: int
    cosine: bool = True
    """Scores are cosines on the absolute scale -1..1; False for a lexical ranking's (BM25), which
    have no fixed scale and are drawn against the top score."""
    windows: Sequence[Window] | None = None
    """The window set ranked, the very object; None where it was not said."""

    def bar_fraction(self, score: float) -> float:
        """How full a score's bar is: the cosine itself, or a lexical score over the top one."""
        if self.cosine:
            return score
        top = self.hits[0].score if self.hits else 0.0
        return score / top if top > 0 else 0.0

    @property
    def ranked_count(self) -> int:
        """How many windows were ranked: fewer than the index holds while it is still embedding."""
        return len(self.ranked_rows)

    def is_of(self, windows: Sequence[Window]) -> bool:
        """Whether this ranking is of the window set ``windows``, the very object it ranked.

        A ranking of a set re-cut or re-scanned since is not, even where the new set has the same
        windows: the files' texts may differ, and its scores are theirs no longer. Asked of the set,
        not of its windows: a set held as columns makes a new window each time one is read.
        """
        return self.windows is windows


def top_k_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """The rows of the ``k`` highest scores, best first; equal scores keep corpus order.

    A partition finds the k-th score in linear time; only the chosen k are then sorted.
    """
    if k <= 0:
        raise BadInputError(f"k must be at least 1, got {k}")
    row_count = scores.shape[0]
    if k >= row_count:
        chosen = np.arange(row_count)
    else:
        kth_score = np.partition(scores, row_count - k)[row_count - k]
        above = np.flatnonzero(scores > kth_score)
        tied = np.flatnonzero(scores == kth_score)[: k - above.shape[0]]
        chosen = np.concatenate([above, tied])
    order = np.lexsort((chosen, -scores[chosen]))
    rows: np.ndarray = chosen[order]
    return rows


SCORE_MARGIN = 1e-6
"""Float32 products of the same vectors may differ in their last bits with the shape of the product."""


def may_reach(new_vectors: np.ndarray, query_vector: np.ndarray, least_kept: float | None) -> bool:
    """Whether any of ``new_vectors`` could enter a top-k whose k-th score is ``least_kept``.

    None means fewer than k are ranked, so any new row enters. A tie counts as entering (ties go in
    corpus order, and a new row may come first) and so does a score within SCORE_MARGIN below.
    Lets the explorer put off re-ranking vectors that cannot change the hits or a control's best.
    """
    if least_kept is None:
        return True
    if new_vectors.shape[0] == 0:
        return False
    scores = new_vectors @ query_vector.astype(new_vectors.dtype, copy=False)
    return bool(scores.max() >= least_kept - SCORE_MARGIN)


def rank(index: IndexSnapshot, query_vector: np.ndarray, k: int) -> SearchResult:
    """The ``k`` windows nearest to ``query_vector`` among those embedded when ``index`` was taken.

    Rows and query are unit vectors, so the dot product is the cosine; k hits come back
    whenever k windows are embedded, however far away they are.
    """
    if query_vector.shape != (index.dimension,):
        raise ValueError(f"expected a query vector of shape ({index.dimension},), got {query_vector.shape}")
    rows = index.embedded_rows()
    # All rows times the query, then the embedded ones picked out: copying a partial matrix per
    # query would cost more than the product itself (1.5 GB at a million windows).
    every_score = index.dot(query_vector.astype(np.float32, copy=False))
    scores = every_score if index.is_complete else every_score[rows]
    return _ranked(scores, rows, index.windows, k, cosine=True)


def rank_answer(index: IndexSnapshot, answer: np.ndarray, k: int) -> SearchResult:
    """Rank what a run's process answered for a question: the query's vector for a model's index, or,
    for a lexical run's index (dimension 0), the BM25 score of every window of it."""
    if index.dimension > 0:
        return rank(index, answer, k)
    if answer.shape != (index.window_count,):
        raise ValueError(
            f"expected {index.window_count} lexical scores, got an answer of shape {answer.shape}"
        )
    return rank_all(answer, index.windows, k, cosine=False)


def rank_all(scores: np.ndarray, windows: Sequence[Window], k: int, *, cosine: bool) -> SearchResult:
    """The ``k`` best of ``scores``, one per window of ``windows`` in corpus order; a window scored
    -inf is not retrieved at all (BM25's for a window sharing no token with the query)."""
    rows = np.flatnonzero(np.isfinite(scores))
    return _ranked(scores[rows], rows, windows, k, cosine=cosine)


def _ranked(
    scores: np.ndarray, rows: np.ndarray, windows: Sequence[Window], k: int, *, cosine: bool
) -> SearchResult:
    """The top ``k`` of ``scores``, the score of each of ``rows``."""
    best = top_k_rows(scores, k)
    hits = tuple(
        Hit(rank=position + 1, score=float(scores[best_row]), window=windows[row], row=int(row))
        for position, (best_row, row) in enumerate(zip(best, rows[best], strict=True))
    )
    return SearchResult(hits, scores, rows, len(windows), cosine, windows)


def full_ranks(scores: np.ndarray) -> np.ndarray:
    """The 1-based rank of every row: higher scores first, equal scores in corpus order."""
    order = np.lexsort((np.arange(scores.shape[0]), -scores))
    ranks = np.empty_like(order)
    ranks[order] = np.arange(1, scores.shape[0] + 1)
    return ranks


def rank_of(result: SearchResult, row: int) -> int | None:
    """The 1-based rank window ``row`` has in ``result``'s full ordering; None if it was not ranked.

    The same order as the top-k: higher scores first, equal scores in corpus order.
    """
    position = int(np.searchsorted(result.ranked_rows, row))
    if position >= result.ranked_count or int(result.ranked_rows[position]) != row:
        return None
    score = result.scores[position]
    higher = int(np.count_nonzero(result.scores > score))
    tied_before = int(np.count_nonzero(result.scores[:position] == score))
    return higher + tied_before + 1


RANKS_BY_FULL_ORDER_FROM = 256
"""From this many rows on, one full sort (N log N) beats counting over every score per row (N each).

Measured at 100k windows: the sort takes 15 ms, one row's count 0.04 ms; they break even near 300 rows.
"""


def ranks_of(result: SearchResult, rows: Sequence[int]) -> list[int | None]:
    """``rank_of`` for each of ``rows``; for many rows, one sort instead of a scan of every score per row."""
    count = result.ranked_count
    if len(rows) < RANKS_BY_FULL_ORDER_FROM or count == 0:
        return [rank_of(result, row) for row in rows]
    rank_at = full_ranks(result.scores)
    asked = np.asarray(rows, dtype=np.int64)
    positions = np.minimum(np.searchsorted(result.ranked_rows, asked), count - 1)
    ranked = result.ranked_rows[positions] == asked
    return [int(rank_at[p]) if r else None for p, r in zip(positions.tolist(), ranked.tolist(), strict=True)]


def score_of(result: SearchResult, row: int) -> float | None:
    """The score window ``row`` got in ``result``; None if it was not ranked (not embedded yet)."""
    position = int(np.searchsorted(result.ranked_rows, row))
    if position < result.ranked_count and int(result.ranked_rows[position]) == row:
        return float(result.scores[position])
    return None
