from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from raglens.embedding import normalize_rows


@given(arrays(np.float64, st.tuples(st.integers(0, 20), st.integers(1, 16)), elements=st.floats(-1e3, 1e3)))
def test_rows_become_unit_length_float32_or_stay_zero(matrix: np.ndarray) -> None:
    unit = normalize_rows(matrix)
    assert unit.dtype == np.float32
    norms = np.linalg.norm(unit.astype(np.float64), axis=1)
    for norm, original in zip(norms, matrix, strict=True):
        if np.linalg.norm(original) > 1e-6:
            assert norm == pytest.approx(1.0, abs=1e-5)
        elif not original.any():
            assert norm == 0.0


def test_normalize_refuses_a_single_vector() -> None:
    with pytest.raises(ValueError, match="2-d"):
        normalize_rows(np.ones(3))
