"""may_reach: when it says new vectors cannot enter a top-k, ranking with them gives the same top-k."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from raglens.search import may_reach, top_k_rows

DIMENSION = 6


def unit_rows(seed: int, count: int) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(count, DIMENSION)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    old_count=st.integers(1, 40),
    new_count=st.integers(0, 12),
    k=st.integers(1, 8),
    duplicate=st.booleans(),
)
def test_a_batch_that_cannot_reach_leaves_the_top_k_as_it_was(
    seed: int, old_count: int, new_count: int, k: int, duplicate: bool
) -> None:
    """The oracle: the top-k over old and new rows together; new rows are mixed in at random places."""
    old, new = unit_rows(seed, old_count), unit_rows(seed + 1, new_count)
    if duplicate and new_count:
        new[0] = old[0]  # an exact tie with an old row
    query = unit_rows(seed + 2, 1)[0]
    old_scores = old @ query
    least_kept = float(old_scores[top_k_rows(old_scores, k)[-1]]) if old_count >= k else None
    order = np.random.default_rng(seed + 3).permutation(old_count + new_count)
    together = np.concatenate([old, new])[order]  # row i of `together` is row order[i] of old+new
    best_together = order[top_k_rows(together @ query, k)]
    best_old = top_k_rows(old_scores, k)
    if not may_reach(new, query, least_kept):
        assert best_together.tolist() == best_old.tolist()
    if new_count and (new @ query).max() > (least_kept if least_kept is not None else -2.0):
        assert may_reach(new, query, least_kept), "a new row that enters is always reported"


def test_fewer_than_k_ranked_means_any_row_enters_and_no_rows_never_do() -> None:
    query = unit_rows(1, 1)[0]
    assert may_reach(unit_rows(2, 1), query, None)
    assert not may_reach(unit_rows(2, 0), query, 0.5)
    assert not may_reach(-query[None, :], query, 0.5)
    assert may_reach(query[None, :], query, 0.5)
