"""The explorer's own process keeps its BLAS to one thread, so its idle helper never spins on a core
the embedding process needs."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from raglens.ui.blas_threads import limit_blas_to_one_thread


def blas_threads() -> set[int]:
    return {library["num_threads"] for library in threadpool_info() if library["user_api"] == "blas"}


def test_every_loaded_blas_runs_one_thread_after_the_limit() -> None:
    assert np.ones((4, 4)) @ np.ones(4) is not None  # numpy's BLAS is loaded
    with threadpool_limits(limits=2, user_api="blas"):  # restored on leaving: other tests keep theirs
        assert blas_threads() == {2}
        limit_blas_to_one_thread.cache_clear()
        limit_blas_to_one_thread()
        assert blas_threads() == {1}
