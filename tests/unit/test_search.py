from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from raglens.embedding import normalize_rows
from raglens.errors import BadInputError
from raglens.index import VectorIndex
from raglens.search import rank, rank_all, rank_answer, top_k_rows
from raglens.windows import Unit, Window, WindowColumns

# Scores drawn from a handful of values, so ties at the k-th place are common.
score_arrays = arrays(
    np.float32,
    st.integers(min_value=0, max_value=60),
    elements=st.sampled_from([-0.5, 0.0, 0.1, 0.25, 0.25, 0.5, 0.9, 1.0]),
)


def oracle_top_k(scores: np.ndarray, k: int) -> list[int]:
    """Brute force: sort every row by (score descending, row ascending)."""
    return sorted(range(len(scores)), key=lambda row: (-float(scores[row]), row))[:k]


@given(score_arrays, st.integers(min_value=1, max_value=70))
def test_top_k_equals_the_brute_force_oracle(scores: np.ndarray, k: int) -> None:
    assert top_k_rows(scores, k).tolist() == oracle_top_k(scores, k)


@given(arrays(np.float32, st.integers(1, 200), elements=st.floats(-1, 1, width=32)), st.integers(1, 20))
def test_top_k_equals_a_stable_argsort(scores: np.ndarray, k: int) -> None:
    expected = np.argsort(-scores, kind="stable")[:k]
    assert top_k_rows(scores, k).tolist() == expected.tolist()


def test_k_must_be_positive() -> None:
    with pytest.raises(BadInputError, match="k must be at least 1"):
        top_k_rows(np.zeros(3, dtype=np.float32), 0)


def _windows(count: int) -> list[Window]:
    return [Window(f"f{i}.txt", Unit.CHARS, 0, 0, 1, 1, 1) for i in range(count)]


def test_rank_scores_are_exact_dot_products_and_have_no_floor() -> None:
    rng = np.random.default_rng(7)
    vectors = normalize_rows(rng.standard_normal((50, 16)))
    index = VectorIndex(_windows(50), 16)
    index.fill(range(50), vectors)
    query = normalize_rows(rng.standard_normal((1, 16)))[0]
    result = rank(index.snapshot(), query, 5)
    assert len(result.hits) == 5, "k hits come back however far away they are"
    assert [hit.rank for hit in result.hits] == [1, 2, 3, 4, 5]
    all_scores = vectors @ query
    for hit in result.hits:
        assert hit.score == float(all_scores[hit.row])
        # One row's dot product agrees up to float32 summation order (BLAS adds in blocks).
        assert hit.score == pytest.approx(float(vectors[hit.row].astype(np.float64) @ query), abs=1e-6)
        assert hit.window == index.windows[hit.row]
    np.testing.assert_array_equal(result.scores, all_scores)
    assert result.hits[0].score == float(np.max(vectors @ query))


def test_rank_a_partial_index_ranks_only_what_is_embedded() -> None:
    index = VectorIndex(_windows(10), 4)
    index.fill([7, 2, 5], normalize_rows(np.eye(4, dtype=np.float32)[:3]))
    result = rank(index.snapshot(), np.array([0, 0, 1, 0], dtype=np.float32), 5)
    assert (result.ranked_count, result.window_count) == (3, 10)
    assert [hit.row for hit in result.hits] == [5, 2, 7], "the third unit vector was filled into row 5"
    assert result.ranked_rows.tolist() == [2, 5, 7]
    assert result.scores.tolist() == [0.0, 1.0, 0.0]
    assert all(hit.window == index.windows[hit.row] for hit in result.hits)


def test_rank_an_empty_index_returns_no_hits() -> None:
    index = VectorIndex(_windows(4), 4)
    assert rank(index.snapshot(), np.ones(4, dtype=np.float32) / 2, 3).hits == ()


def test_query_of_the_wrong_dimension_is_refused() -> None:
    index = VectorIndex(_windows(1), 4)
    with pytest.raises(ValueError, match="shape"):
        rank(index.snapshot(), np.ones(3, dtype=np.float32), 1)


@given(arrays(np.float32, st.integers(1, 40), elements=st.sampled_from([-np.inf, 0.5, 1.0, 2.5, 7.0])))
def test_a_lexical_answer_ranks_every_windows_score_and_only_the_windows_it_retrieved(
    scores: np.ndarray,
) -> None:
    """A BM25 run's index has no vectors (dimension 0): its answer is each window's score, -inf for a
    window sharing no word; the ranking is the brute-force one over the others, marked not cosine."""
    windows = [Window("a.md", Unit.CHARS, n, n * 10, n * 10 + 10, n + 1, n + 1) for n in range(len(scores))]
    index = VectorIndex(windows, 0)
    index.fill(range(len(windows)), np.zeros((len(windows), 0), np.float32))
    result = rank_answer(index.snapshot(), scores, 5)
    retrieved = [row for row in range(len(scores)) if np.isfinite(scores[row])]
    expected = sorted(retrieved, key=lambda row: (-float(scores[row]), row))[:5]
    assert [hit.row for hit in result.hits] == expected
    assert not result.cosine and result.ranked_count == len(retrieved)
    if result.hits:
        assert result.bar_fraction(result.hits[0].score) == 1.0
    with pytest.raises(ValueError, match="lexical scores"):
        rank_answer(index.snapshot(), np.append(scores, 1.0), 5)  # another window set's answer


def test_a_ranking_is_of_its_own_window_set_and_no_set_cut_again() -> None:
    windows = WindowColumns.of(Unit.CHARS, _windows(10))
    index = VectorIndex(windows, 4)
    assert index.windows is windows, "a set given as columns is the index's own"
    index.fill(range(10), normalize_rows(np.random.default_rng(3).standard_normal((10, 4))))
    result = rank(index.snapshot(), np.array([1, 0, 0, 0], dtype=np.float32), 3)
    assert result.is_of(windows)
    again = WindowColumns.of(Unit.CHARS, _windows(10))
    assert list(again) == list(windows) and not result.is_of(again), (
        "the same windows cut again: the files' texts may have changed since"
    )
    assert not result.is_of(list(windows)), "a copy of the set is another set"
    lexical = rank_all(np.ones(10), windows, 3, cosine=False)
    assert lexical.is_of(windows) and not lexical.is_of(again)
