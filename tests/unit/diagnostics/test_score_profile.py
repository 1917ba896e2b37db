from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from raglens.diagnostics.score_profile import BIN_COUNT, bin_of, median, score_profile, sparkline

scores_strategy = arrays(np.float32, st.integers(1, 80), elements=st.floats(-1, 1, width=32))


@given(scores_strategy, st.integers(1, 90))
def test_profile_agrees_with_a_full_sort(scores: np.ndarray, k: int) -> None:
    profile = score_profile(scores, k)
    ordered = sorted(scores.tolist(), reverse=True)
    shown = min(k, len(ordered))
    assert profile.ranked_count == len(ordered)
    assert sum(profile.counts) == len(ordered)
    assert profile.top_score == ordered[0]
    assert profile.kth_score == ordered[shown - 1]
    assert profile.next_score == (ordered[shown] if len(ordered) > shown else None)
    assert profile.median == pytest.approx(float(np.median(scores)))


@given(scores_strategy)
def test_the_median_is_numpys_to_the_bit(scores: np.ndarray) -> None:
    assert median(scores) == float(np.median(scores))


def test_bins_are_fixed_on_the_absolute_scale() -> None:
    low = score_profile(np.array([0.10, 0.12, 0.14], dtype=np.float32), 1)
    high = score_profile(np.array([0.60, 0.62, 0.64], dtype=np.float32), 1)
    # The same shape of scores lands in different bins: nothing is stretched per query.
    assert low.counts != high.counts
    assert bin_of(0.12) < bin_of(0.62)
    assert bin_of(-5.0) == 0
    assert bin_of(5.0) == BIN_COUNT - 1


def test_gap_and_z_score() -> None:
    profile = score_profile(np.array([0.9, 0.5, 0.4, 0.1], dtype=np.float32), 2)
    assert profile.gap == pytest.approx(0.1)
    assert profile.top_z > 1


def test_sparkline_has_one_character_a_bin_and_shows_a_lone_count() -> None:
    counts = (0, 1, 1000, 0)
    line = sparkline(counts)
    assert len(line) == 4
    assert line[0] == " " and line[3] == " "
    assert line[1] != " "  # a single window is still visible next to a thousand
    assert line[2] == "█"
