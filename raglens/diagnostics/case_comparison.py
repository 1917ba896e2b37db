"""Which golden questions each configuration wins or loses against the best one.

An aggregate row says recall@k went from 70 % to 75 %; it hides that the new configuration found
three questions the other missed and lost two it had. Each answerable case is compared on what it
adds to the aggregates: its recall first (the share of its refs in the top k), then its reciprocal
rank. A case missed by both sides is the same, whatever its rank below k.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from raglens.diagnostics.evaluation import CaseResult, EvalReport


class Change(Enum):
    """How a case fares in one configuration against the best configuration."""

    GAINED = "gained"
    LOST = "lost"
    SAME = "same"


def standing(result: CaseResult) -> tuple[float, float]:
    """What a case adds to recall@k and MRR, compared in that order (higher is better)."""
    return (result.recall or 0.0, result.reciprocal_rank or 0.0)


def change(result: CaseResult, best: CaseResult) -> Change:
    """How ``result`` fares against the same case in the best configuration."""
    mine, theirs = standing(result), standing(best)
    if mine > theirs:
        return Change.GAINED
    if mine < theirs:
        return Change.LOST
    return Change.SAME


@dataclass(frozen=True)
class CaseAcross:
    """One answerable golden case in every configuration, in row order."""

    results: tuple[CaseResult, ...]
    changes: tuple[Change | None, ...]
    """Against the best row; None in the best row itself (or every row, with no best)."""

    @property
    def case_line(self) -> int:
        return self.results[0].case.line


@dataclass(frozen=True)
class RowTally:
    """How many answerable cases one configuration gains, loses and keeps against the best one."""

    row: int
    gained: tuple[int, ...]
    """The golden-file lines of the cases it ranks better than the best configuration does."""
    lost: tuple[int, ...]
    same: int


@dataclass(frozen=True)
class CaseComparison:
    """Every answerable case across the configurations, and the tally of each against the best."""

    best: int | None
    cases: tuple[CaseAcross, ...]
    tallies: tuple[RowTally, ...]
    """One per row other than the best; empty with no best."""
    negatives: int
    """Cases with nothing to find, compared by their top score elsewhere (calibration), not here."""


def compare_cases(reports: Sequence[EvalReport], best: int | None) -> CaseComparison:
    """The cases of ``reports`` (one per configuration, the same golden set) against row ``best``."""
    if not reports:
        return CaseComparison(best, (), (), 0)
    positions = [index for index, result in enumerate(reports[0].results) if not result.case.is_negative]
    cases = []
    for position in positions:
        results = tuple(report.results[position] for report in reports)
        if best is None:
            changes: tuple[Change | None, ...] = tuple(None for _ in results)
        else:
            changes = tuple(
                None if row == best else change(result, results[best]) for row, result in enumerate(results)
            )
        cases.append(CaseAcross(results, changes))
    tallies = []
    if best is not None:
        for row in range(len(reports)):
            if row == best:
                continue
            gained = tuple(case.case_line for case in cases if case.changes[row] is Change.GAINED)
            lost = tuple(case.case_line for case in cases if case.changes[row] is Change.LOST)
            tallies.append(RowTally(row, gained, lost, len(cases) - len(gained) - len(lost)))
    negatives = len(reports[0].results) - len(positions)
    return CaseComparison(best, tuple(cases), tuple(tallies), negatives)


def rank_label(result: CaseResult) -> str:
    """A case's rank as a cell shows it: ``3``, ``3 (1/2)`` when ``all`` found only some refs, ``miss``."""
    rank = result.rank
    if rank is None or rank > result.k:
        return "miss"
    if result.case.mode == "all" and len(result.ref_ranks) > 1:
        return f"{rank} ({result.refs_found}/{len(result.ref_ranks)})"
    return str(rank)
