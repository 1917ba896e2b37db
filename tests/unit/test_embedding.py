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


def test_a_device_list_asks_for_a_pool_and_one_device_does_not() -> None:
    from raglens.devices import pool_devices
    from raglens.errors import BadInputError

    assert pool_devices("cuda:0,cuda:1") == ["cuda:0", "cuda:1"]
    assert pool_devices(" cpu , cpu ") == ["cpu", "cpu"]
    assert pool_devices("cuda") is None and pool_devices(None) is None
    with pytest.raises(BadInputError, match="names each one"):
        pool_devices("cuda:0,")


def test_cpu_workers_share_the_cores() -> None:
    from raglens.devices import threads_per_cpu_worker

    assert threads_per_cpu_worker(["cpu"] * 4, 16) == 4
    assert threads_per_cpu_worker(["cpu", "cpu", "cpu"], 2) == 1
    assert threads_per_cpu_worker(["cuda:0", "cpu"], 8) == 8
    assert threads_per_cpu_worker(["cpu", "cpu"], None) == 1


def test_queries_are_on_the_cpu_for_the_cpu_and_for_any_pool_and_not_for_one_gpu() -> None:
    """bf16's 'emulated on this CPU' note hangs on this: both branches, asked for and as labelled."""
    from raglens.devices import asks_for_cpu_queries, embeds_queries_on_cpu

    assert asks_for_cpu_queries("cpu") and asks_for_cpu_queries("cuda:0,cuda:1")
    assert not asks_for_cpu_queries("cuda") and not asks_for_cpu_queries("cuda:1")
    assert embeds_queries_on_cpu("cpu") and embeds_queries_on_cpu("cuda:0+cuda:1")
    assert not embeds_queries_on_cpu("cuda:0") and not embeds_queries_on_cpu("mps")
