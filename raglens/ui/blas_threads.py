"""One BLAS thread for the explorer's own process, whose embedding process needs every core.

After each matrix product an OpenBLAS (or MKL) helper thread spins, waiting for the next one. The
UI process ranks a little at a time while vectors stream in, so its helper spun most of the run: on
a cold 1,613-window run (2 cores) it took 9.6 s of CPU of the UI process's 17.5 s, and the run took
78-79 s against 74 s with one thread. The UI's products are the windows times one question, or
times the noise band's control questions: small, and bound by memory.
"""

from __future__ import annotations

import functools


@functools.cache
def limit_blas_to_one_thread() -> None:
    """Make every BLAS library loaded in this process by now use one thread: call it after numpy's
    import (a library loaded after the first call keeps its own threads)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
