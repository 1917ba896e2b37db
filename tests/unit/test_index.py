from __future__ import annotations

import numpy as np
import pytest

from raglens.index import VectorIndex
from raglens.windows import Unit, Window


def _index(count: int = 5, dimension: int = 3) -> VectorIndex:
    windows = [Window("a.txt", Unit.CHARS, i, i, i + 1, 1, 1) for i in range(count)]
    return VectorIndex(windows, dimension)


def test_batches_fill_rows_in_order() -> None:
    index = _index()
    assert (index.embedded_count, index.window_count, index.is_complete) == (0, 5, False)
    index.append(np.full((2, 3), 0.5, dtype=np.float32))
    index.append(np.full((3, 3), 0.25, dtype=np.float32))
    assert index.is_complete
    assert index.vectors[:2].tolist() == [[0.5] * 3] * 2
    assert index.vectors[2:].tolist() == [[0.25] * 3] * 3
    assert index.vectors.dtype == np.float32


def test_vectors_are_read_only() -> None:
    index = _index()
    index.append(np.ones((1, 3), dtype=np.float32))
    with pytest.raises(ValueError):
        index.vectors[0, 0] = 2.0


def test_wrong_shapes_and_overflow_are_refused() -> None:
    index = _index(count=2)
    with pytest.raises(ValueError, match="shape"):
        index.append(np.ones((1, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="too many"):
        index.append(np.ones((3, 3), dtype=np.float32))
    assert index.embedded_count == 0
