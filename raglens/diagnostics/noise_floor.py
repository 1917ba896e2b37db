"""What an unanswerable question scores: the band of best scores of many off-topic control questions.

Naive RAG has no floor, so a question the corpus cannot answer still gets k hits. The band is the
spread of the control questions' best scores on this corpus; its edge is their 95th percentile, and
a score within one standard deviation of the edge either side is *undecided*: the band's own spread
is how far an off-topic best moves with the wording, so a hit that close to it cannot be told from
noise. This module is the one definition: ``search``, ``probe``, the explorer and its failure lab all
measure and judge with it.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from raglens.diagnostics.control_questions import CONTROL_QUESTIONS
from raglens.index import IndexSnapshot

__all__ = ["CONTROL_QUESTIONS", "ControlScore", "NoiseFloor", "NoiseVerdict", "measure_noise_floor"]

EDGE_PERCENTILE = 95.0
"""The band's edge: this percentile of the control questions' best scores (linear interpolation)."""


class NoiseVerdict(enum.Enum):
    """Where a score stands against the band."""

    ABOVE = "above noise"
    UNDECIDED = "undecided"
    WITHIN = "within noise"


@dataclass(frozen=True)
class ControlScore:
    """The best score one control question reached."""

    question: str
    top_score: float
    citation: str
    """Where that best, meaningless hit is."""


@dataclass(frozen=True)
class NoiseFloor:
    """The control questions' best scores, and the edge and spread taken from them."""

    controls: tuple[ControlScore, ...]

    @functools.cached_property
    def tops(self) -> np.ndarray:
        """The control questions' best scores, in their order."""
        return np.array([control.top_score for control in self.controls], dtype=np.float64)

    @functools.cached_property
    def low(self) -> float:
        return float(self.tops.min())

    @functools.cached_property
    def high(self) -> float:
        return float(self.tops.max())

    @functools.cached_property
    def edge(self) -> float:
        """The 95th percentile of the control questions' best scores."""
        return float(np.percentile(self.tops, EDGE_PERCENTILE))

    @functools.cached_property
    def spread(self) -> float:
        """The standard deviation of the control questions' best scores (0 for a single one)."""
        tops = self.tops
        return float(tops.std(ddof=1)) if len(tops) > 1 else 0.0

    @property
    def undecided_band(self) -> tuple[float, float]:
        """The scores judged undecided: the edge, give or take the spread."""
        return self.edge - self.spread, self.edge + self.spread

    def verdict(self, score: float) -> NoiseVerdict:
        """Above the undecided band, inside it, or below it (within noise)."""
        low, high = self.undecided_band
        if score > high:
            return NoiseVerdict.ABOVE
        if score >= low:
            return NoiseVerdict.UNDECIDED
        return NoiseVerdict.WITHIN

    def stands_above(self, score: float) -> bool:
        """Whether ``score`` is clearly above the band (not undecided)."""
        return self.verdict(score) is NoiseVerdict.ABOVE

    def describe_band(self) -> str:
        """E.g. ``noise edge 0.262 ± 0.031 (95th percentile of 32 off-topic questions' best scores)``."""
        return (
            f"noise edge {self.edge:.3f} ± {self.spread:.3f} ({EDGE_PERCENTILE:.0f}th percentile of "
            f"{len(self.controls)} off-topic questions' best scores)"
        )


def measure_noise_floor(
    index: IndexSnapshot,
    embed_query: Callable[[str], np.ndarray],
    questions: Sequence[str] = CONTROL_QUESTIONS,
) -> NoiseFloor | None:
    """The noise floor over the windows embedded so far; None before any is.

    One product of the embedded vectors with every control question's vector: the best score of each
    is the top of a full ranking (at 100k windows, one pass instead of one per question).
    """
    if index.embedded_count == 0 or not questions:
        return None
    controls = np.stack([embed_query(question).astype(np.float32, copy=False) for question in questions])
    rows = index.embedded_rows()
    products = index.storage @ controls.T
    scores = products if index.is_complete else products[rows]
    best = scores.argmax(axis=0)
    return NoiseFloor(
        tuple(
            ControlScore(question, float(scores[place, column]), index.windows[int(rows[place])].citation)
            for column, (question, place) in enumerate(zip(questions, best, strict=True))
        )
    )
