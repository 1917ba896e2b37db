"""The scores of every window for one query, summarised: where the k-th hit sits among all of them.

Scores stay on the absolute cosine scale: the bins are fixed, never stretched per query, so an
off-topic question whose best hit is 0.15 looks different from a real one whose best is 0.6.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BIN_FLOOR = -0.25
BIN_WIDTH = 0.05
BIN_COUNT = 25
"""Bins of 0.05 from -0.25 to 1.0; lower scores count in the first bin."""

_BARS = " ▁▂▃▄▅▆▇█"


@dataclass(frozen=True)
class ScoreProfile:
    """The distribution of one query's scores over every ranked window."""

    ranked_count: int
    counts: tuple[int, ...]
    """Windows per bin of ``BIN_WIDTH`` from ``BIN_FLOOR``."""
    top_score: float
    kth_score: float
    """The score of the last hit shown (rank k, or the last window when fewer are ranked)."""
    next_score: float | None
    """The score of rank k+1, the first window not shown; None when every window is shown."""
    median: float
    mean: float
    std: float

    @property
    def gap(self) -> float | None:
        """How far the k-th hit stands above the first one left out."""
        return None if self.next_score is None else self.kth_score - self.next_score

    @property
    def top_z(self) -> float:
        """How many standard deviations the best hit stands above the mean score."""
        return (self.top_score - self.mean) / self.std if self.std > 0 else 0.0

    def share_at_or_above(self, score: float) -> float:
        """Approximately which share of windows score at least ``score`` (from the bins)."""
        first = bin_of(score)
        return sum(self.counts[first:]) / self.ranked_count if self.ranked_count else 0.0


def bin_of(score: float) -> int:
    """The bin that holds ``score``."""
    return min(BIN_COUNT - 1, max(0, int((score - BIN_FLOOR) // BIN_WIDTH)))


def median(values: np.ndarray) -> float:
    """``np.median(values)`` of a non-empty 1-d array, to the bit, without what it costs first.

    np.median imports numpy.ma on its first call (10-45 ms): on the path to a warm start's first hits.
    """
    middle = values.size // 2
    if values.size % 2:
        return float(np.partition(values, middle)[middle])
    both = np.partition(values, [middle - 1, middle])[middle - 1 : middle + 1]
    return float(np.mean(both))


def score_profile(scores: np.ndarray, k: int) -> ScoreProfile:
    """The profile of ``scores`` (one per ranked window) when the top ``k`` are shown."""
    if scores.size == 0:
        return ScoreProfile(0, (0,) * BIN_COUNT, 0.0, 0.0, None, 0.0, 0.0, 0.0)
    bins = np.clip(((scores - BIN_FLOOR) // BIN_WIDTH).astype(np.int64), 0, BIN_COUNT - 1)
    counts = np.bincount(bins, minlength=BIN_COUNT)
    shown = min(k, scores.size)
    # The k+1 highest, best first: a partition, then a sort of only those.
    highest = np.sort(np.partition(scores, scores.size - min(shown + 1, scores.size))[-(shown + 1) :])[::-1]
    return ScoreProfile(
        ranked_count=int(scores.size),
        counts=tuple(int(c) for c in counts),
        top_score=float(highest[0]),
        kth_score=float(highest[shown - 1]),
        next_score=float(highest[shown]) if scores.size > shown else None,
        median=median(scores),
        mean=float(scores.mean()),
        std=float(scores.std()),
    )


def sparkline(counts: tuple[int, ...]) -> str:
    """One character per bin, its height growing with the log of the count, so lone top hits show."""
    if not counts:
        return ""
    peak = np.log1p(max(counts))
    levels = len(_BARS) - 1
    return "".join(
        _BARS[0] if count == 0 else _BARS[max(1, round(np.log1p(count) / peak * levels))] for count in counts
    )
