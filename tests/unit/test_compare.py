"""Following hits between two rankings: the same window's rank, else the best over the same text,
and only among the windows ranked so far."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from raglens.compare import compare, ranks_in_other
from raglens.search import Hit, SearchResult, full_ranks
from raglens.windows import Unit, Window


def windows_of(size: int, step: int, length: int = 100) -> list[Window]:
    starts = range(0, max(length - size, 0) + 1, step)
    return [Window("f.txt", Unit.CHARS, i, s, s + size, 1, 1) for i, s in enumerate(starts)]


def ranking(windows: list[Window], scores: np.ndarray, ranked: np.ndarray, k: int) -> SearchResult:
    ranked_scores = scores[ranked]
    order = np.lexsort((ranked, -ranked_scores))[:k]
    hits = tuple(
        Hit(n + 1, float(ranked_scores[i]), windows[ranked[i]], int(ranked[i])) for n, i in enumerate(order)
    )
    return SearchResult(hits, ranked_scores, ranked, len(windows))


@given(st.data())
def test_ranks_in_other_is_the_same_window_else_the_best_overlapping_ranked_one(data: st.DataObject) -> None:
    a = windows_of(30, 20)
    b = windows_of(data.draw(st.integers(10, 40)), data.draw(st.integers(5, 10)))
    scores_b = np.array(
        data.draw(st.lists(st.floats(-1, 1, width=32), min_size=len(b), max_size=len(b))), np.float32
    )
    ranked = np.array(sorted(data.draw(st.sets(st.integers(0, len(b) - 1), min_size=1))), np.int64)
    other = ranking(b, scores_b, ranked, 3)
    hits = [Hit(1, 0.0, window, row) for row, window in enumerate(a)]
    ranks = full_ranks(scores_b[ranked])  # among the ranked rows, ties in row order
    rank_of = {int(row): int(rank) for row, rank in zip(ranked, ranks, strict=True)}
    for hit, found in zip(hits, ranks_in_other(hits, b, other), strict=True):
        same = [
            row
            for row, w in enumerate(b)
            if (w.start, w.end) == (hit.window.start, hit.window.end) and row in rank_of
        ]
        over = [
            row
            for row, w in enumerate(b)
            if w.start < hit.window.end and hit.window.start < w.end and row in rank_of
        ]
        expected = min(rank_of[row] for row in (same or over)) if (same or over) else None
        assert found == expected


def test_compare_counts_the_top_k_shared_by_text() -> None:
    a = windows_of(50, 50)  # [0,50) [50,100)
    b = windows_of(50, 25)  # [0,50) [25,75) [50,100)
    result_a = ranking(a, np.array([0.9, 0.1], np.float32), np.arange(2), 1)
    result_b = ranking(b, np.array([0.1, 0.2, 0.8], np.float32), np.arange(3), 1)
    comparison = compare(result_a, a, result_b, b, 1)
    assert comparison.a[0].rank_in_other == 3  # A's top window is B's [0,50): rank 3 there
    assert comparison.b[0].rank_in_other == 2  # B's top [50,100) is A's [50,100): rank 2 in A
    assert comparison.shared == 0
    assert comparison.a[0].describe(1, side="a") == "gone (B #3)"
    assert comparison.b[0].describe(1, side="b") == "new (A #2)"
