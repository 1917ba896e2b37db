import random

import pytest

from tidepool.errors import PermanentFailure
from tidepool.retry import compute_backoff_delay, should_retry


def test_delay_doubles_until_the_cap():
    rng = random.Random(0)
    upper_bounds = [2.0, 4.0, 8.0, 16.0]
    for attempt, bound in enumerate(upper_bounds, start=1):
        delay = compute_backoff_delay(attempt, base=2.0, cap=600.0, rng=rng)
        assert bound / 2 <= delay <= bound


def test_delay_never_exceeds_the_cap():
    assert compute_backoff_delay(30, base=2.0, cap=60.0) <= 60.0


def test_attempts_start_at_one():
    with pytest.raises(ValueError):
        compute_backoff_delay(0)


def test_permanent_failure_is_never_retried():
    assert not should_retry(PermanentFailure("bad input"), attempt=1, max_attempts=5)
    assert should_retry(RuntimeError("flaky"), attempt=1, max_attempts=5)
    assert not should_retry(RuntimeError("flaky"), attempt=5, max_attempts=5)
