from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from raglens.embedding_events import ReadingExtent
from raglens.index import VectorIndex
from raglens.windows import Unit, Window


def _index(count: int = 5, dimension: int = 3) -> VectorIndex:
    windows = [Window("a.txt", Unit.CHARS, i, i, i + 1, 1, 1) for i in range(count)]
    return VectorIndex(windows, dimension)


def test_batches_fill_their_rows() -> None:
    index = _index()
    assert (index.embedded_count, index.window_count, index.is_complete) == (0, 5, False)
    index.fill(range(2), np.full((2, 3), 0.5, dtype=np.float32))
    index.fill(range(2, 5), np.full((3, 3), 0.25, dtype=np.float32))
    assert index.is_complete
    assert index.vectors[:2].tolist() == [[0.5] * 3] * 2
    assert index.vectors[2:].tolist() == [[0.25] * 3] * 3
    assert index.vectors.dtype == np.float32


@given(st.permutations(range(8)), st.integers(1, 8))
def test_rows_filled_in_any_order_are_counted_once_and_kept_in_row_order(order: list[int], cut: int) -> None:
    index = _index(count=8, dimension=2)
    first, rest = order[:cut], order[cut:]
    index.fill(first, np.array([[row, -row] for row in first], dtype=np.float32))
    index.fill(first[:1], np.array([[first[0], -first[0]]], dtype=np.float32))  # again: no double count
    assert index.embedded_count == len(first)
    assert index.embedded_rows().tolist() == sorted(first)
    assert index.vectors[:, 0].tolist() == sorted(first)
    index.fill(
        rest,
        np.array([[row, -row] for row in rest], dtype=np.float32),
        [ReadingExtent(row, row) for row in rest],
    )
    assert index.is_complete
    assert index.vectors[:, 0].tolist() == list(range(8))
    assert all(index.extent(row) == ReadingExtent(row, row) for row in rest)


def test_vectors_are_read_only() -> None:
    index = _index()
    index.fill([0], np.ones((1, 3), dtype=np.float32))
    with pytest.raises(ValueError):
        index.vectors[0, 0] = 2.0


def test_wrong_shapes_and_rows_are_refused() -> None:
    index = _index(count=2)
    with pytest.raises(ValueError, match="shape"):
        index.fill([0], np.ones((1, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="outside"):
        index.fill([0, 2], np.ones((2, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="extents"):
        index.fill([0], np.ones((1, 3), dtype=np.float32), [])
    assert index.embedded_count == 0
