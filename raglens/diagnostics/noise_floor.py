"""What an unanswerable question scores: the band of top scores of a few off-topic control questions.

Naive RAG has no floor, so a question the corpus cannot answer still gets k hits. Drawn behind every
query's bars, this band shows whether a hit stands above what noise alone reaches on this corpus.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from raglens.diagnostics.control_questions import CONTROL_QUESTIONS
from raglens.index import IndexSnapshot
from raglens.search import rank

__all__ = ["CONTROL_QUESTIONS", "ControlScore", "NoiseFloor", "measure_noise_floor"]


@dataclass(frozen=True)
class ControlScore:
    """The best score one control question reached."""

    question: str
    top_score: float
    citation: str
    """Where that best, meaningless hit is."""


@dataclass(frozen=True)
class NoiseFloor:
    """The band the control questions' top scores span."""

    controls: tuple[ControlScore, ...]

    @property
    def low(self) -> float:
        return min(control.top_score for control in self.controls)

    @property
    def high(self) -> float:
        return max(control.top_score for control in self.controls)

    def stands_above(self, score: float) -> bool:
        """Whether ``score`` is higher than any control question's best."""
        return score > self.high


def measure_noise_floor(
    index: IndexSnapshot,
    embed_query: Callable[[str], np.ndarray],
    questions: Sequence[str] = CONTROL_QUESTIONS,
) -> NoiseFloor | None:
    """The noise floor over the windows embedded so far; None before any is."""
    if index.embedded_count == 0 or not questions:
        return None
    controls = []
    for question in questions:
        best = rank(index, embed_query(question), 1).hits[0]
        controls.append(ControlScore(question, best.score, best.window.citation))
    return NoiseFloor(tuple(controls))
