"""Two rankings of one query side by side: where each hit's text landed in the other configuration.

A hit's rank in the other ranking is that of the same window (same file, same characters) when the
other configuration has it, as with another model or token limit. Where the windows differ (another
size moves every boundary) the hit is followed by its text: the best rank of any window there that
holds part of the same characters of the same file.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from raglens.diagnostics.golden import ExpectedRef
from raglens.diagnostics.query_report import expected_ranks
from raglens.diagnostics.score_profile import ScoreProfile, score_profile
from raglens.diagnostics.symbols import Definition
from raglens.index import IndexSnapshot
from raglens.printable import printable_name
from raglens.search import Hit, SearchResult, full_ranks, rank_answer
from raglens.windows import Window, as_columns


@dataclass(frozen=True)
class Movement:
    """One hit's rank in its own ranking and in the other's."""

    rank: int
    rank_in_other: int | None
    """None when no window of the other configuration holds any of its characters."""

    def describe(self, k: int, *, side: str) -> str:
        """How the text moved from A to B, seen from this hit on ``side`` ("a" or "b").

        ``↑3`` / ``↓2`` / ``=`` when it is in both top k; ``gone (B #14)`` for an A hit that B ranks
        below its top k, ``new (A #14)`` for a B hit that A ranked below it.
        """
        other = self.rank_in_other
        if other is None:
            return "gone (not in B)" if side == "a" else "new (not in A)"
        if other > k:
            return f"gone (B #{other})" if side == "a" else f"new (A #{other})"
        rank_a, rank_b = (self.rank, other) if side == "a" else (other, self.rank)
        if rank_a == rank_b:
            return "="
        return f"↑{rank_a - rank_b}" if rank_b < rank_a else f"↓{rank_b - rank_a}"


class WindowsByFile:
    """A configuration's windows grouped by file, each file's in order, to find those over a span."""

    def __init__(self, windows: Sequence[Window]) -> None:
        self._windows = as_columns(windows)
        self._ends: dict[str, list[int]] = {}
        """Each file's windows' ends, in order, for the files asked about so far."""

    def overlapping(self, path: str, start: int, end: int) -> list[int]:
        """The rows of ``path``'s windows that share a character with ``[start, end)``."""
        rows = self._windows.rows_of(path)
        ends = self._ends.get(path)
        if ends is None:
            ends = self._ends[path] = [window.end for _, window in self._windows.numbered_windows_of(path)]
        found = []
        for position in range(bisect_left(ends, start + 1), len(rows)):
            if self._windows[rows[position]].start >= end:
                break
            found.append(rows[position])
        return found


def ranks_in_other(
    hits: Sequence[Hit], other_windows: Sequence[Window], other: SearchResult
) -> list[int | None]:
    """For each hit, the best rank in ``other`` of a window holding part of its text.

    ``other`` may cover only the windows embedded so far (the explorer ranks while it indexes):
    ranks are then among those, and a hit whose text no ranked window holds has None.
    """
    ranks = _ranks_by_row(other)
    by_file = WindowsByFile(other_windows)
    found: list[int | None] = []
    for hit in hits:
        window = hit.window
        rows = [row for row in by_file.overlapping(window.path, window.start, window.end) if ranks[row] > 0]
        same = [
            row
            for row in rows
            if (other_windows[row].start, other_windows[row].end) == (window.start, window.end)
        ]
        chosen = same or rows
        found.append(int(ranks[chosen].min()) if chosen else None)
    return found


def _ranks_by_row(result: SearchResult) -> np.ndarray:
    """The rank of every row of the index (0 for a row not ranked), ties in corpus order."""
    ranks = np.zeros(result.window_count, dtype=np.int64)
    order = np.argsort(result.ranked_rows, kind="stable")  # corpus order, so full_ranks breaks ties by row
    ranks[result.ranked_rows[order]] = full_ranks(result.scores[order])
    return ranks


@dataclass(frozen=True)
class Comparison:
    """A's and B's top k for one query, each hit with its rank in the other ranking."""

    k: int
    a: tuple[Movement, ...]
    b: tuple[Movement, ...]

    @property
    def shared(self) -> int:
        """How many of A's top k have their text in B's top k."""
        return sum(m.rank_in_other is not None and m.rank_in_other <= self.k for m in self.a)


def compare(
    a_result: SearchResult,
    a_windows: Sequence[Window],
    b_result: SearchResult,
    b_windows: Sequence[Window],
    k: int,
) -> Comparison:
    """Follow each side's hits into the other's full ranking."""
    a_ranks = ranks_in_other(a_result.hits, b_windows, b_result)
    b_ranks = ranks_in_other(b_result.hits, a_windows, a_result)
    return Comparison(
        k,
        tuple(Movement(hit.rank, rank) for hit, rank in zip(a_result.hits, a_ranks, strict=True)),
        tuple(Movement(hit.rank, rank) for hit, rank in zip(b_result.hits, b_ranks, strict=True)),
    )


@dataclass(frozen=True)
class ExpectedMove:
    """Where an expected answer ranks in A and in B."""

    ref: ExpectedRef
    rank_a: int | None
    rank_b: int | None

    def describe(self) -> str:
        """``expected docs/retries.md: A #3 → B #1``."""
        a = "nowhere" if self.rank_a is None else f"#{self.rank_a}"
        b = "nowhere" if self.rank_b is None else f"#{self.rank_b}"
        return f"expected {printable_name(str(self.ref))}: A {a} → B {b}"


def expected_moves(
    a_result: SearchResult,
    a_windows: Sequence[Window],
    b_result: SearchResult,
    b_windows: Sequence[Window],
    expected: Mapping[ExpectedRef, Sequence[Definition]],
) -> tuple[ExpectedMove, ...]:
    """Each expected answer's best rank in A's ranking and in B's."""
    in_a = expected_ranks(a_result, a_windows, expected)
    in_b = expected_ranks(b_result, b_windows, expected)
    return tuple(ExpectedMove(a.ref, a.rank, b.rank) for a, b in zip(in_a, in_b, strict=True))


@dataclass(frozen=True)
class VersusRanking:
    """B's ranking of one question, how its hits and A's moved, and B's score distribution."""

    question: int
    """The number of the question ranked (the app draws it only under that question)."""
    result: SearchResult
    comparison: Comparison
    profile: ScoreProfile
    expected: tuple[ExpectedMove, ...] = ()


def rank_versus(
    question: int,
    vector: np.ndarray,
    b_index: IndexSnapshot,
    a_result: SearchResult,
    a_windows: Sequence[Window],
    k: int,
    expected: Mapping[ExpectedRef, Sequence[Definition]],
) -> VersusRanking:
    """Rank the question over what B has embedded, and follow every hit of A and B into the other.

    ``vector`` is what B's process answered: the question's vector, or every window's BM25 score.
    """
    result = rank_answer(b_index, vector, k)
    comparison = compare(a_result, a_windows, result, b_index.windows, k)
    moves = expected_moves(a_result, a_windows, result, b_index.windows, expected) if expected else ()
    return VersusRanking(question, result, comparison, score_profile(result.scores, k), moves)
