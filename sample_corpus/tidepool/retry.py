"""When a failed job runs again: exponential backoff with jitter."""

from __future__ import annotations

import random

from tidepool.errors import PermanentFailure


def compute_backoff_delay(attempt: int, base: float = 2.0, cap: float = 600.0,
                          rng: random.Random | None = None) -> float:
    """Seconds to wait before the attempt after ``attempt`` (1-based).

    The delay doubles with every attempt up to ``cap``, then a random factor between
    0.5 and 1.0 spreads retries of many jobs apart.
    """
    if attempt < 1:
        raise ValueError(f"attempt numbers start at 1, got {attempt}")
    rng = rng or random.Random()
    delay = min(cap, base * 2 ** (attempt - 1))
    return delay * rng.uniform(0.5, 1.0)


def should_retry(error: BaseException, attempt: int, max_attempts: int) -> bool:
    """Whether a job that raised ``error`` on ``attempt`` gets another attempt."""
    if isinstance(error, PermanentFailure):
        return False
    return attempt < max_attempts
