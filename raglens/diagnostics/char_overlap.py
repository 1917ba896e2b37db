"""How much of what was retrieved is the answer: recall, precision and IoU counted in characters.

Chroma's chunking study scores retrieval this way: the answer is a set of characters (a symbol's
definition, a line range), so is what the top-k windows span, and overlapping windows count each
character once. A window size that finds the answer by carrying a whole file beside it shows here
as low precision, though recall@k calls it found.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Span = tuple[str, int, int]
"""A file's path and the offsets of the first and one past the last character."""


@dataclass(frozen=True)
class CharOverlap:
    """The answer's characters against the retrieved ones, each set counted without repeats."""

    answer: int
    """Characters of the answer."""
    retrieved: int
    """Characters the top-k windows span, an overlap between two windows counted once."""
    shared: int
    """Characters in both."""

    @property
    def recall(self) -> float:
        """The share of the answer's characters that were retrieved."""
        return self.shared / self.answer if self.answer else 0.0

    @property
    def precision(self) -> float:
        """The share of the retrieved characters that are the answer."""
        return self.shared / self.retrieved if self.retrieved else 0.0

    @property
    def iou(self) -> float:
        """Shared characters over the characters in either set."""
        union = self.answer + self.retrieved - self.shared
        return self.shared / union if union else 0.0


@dataclass(frozen=True)
class CharacterSummary:
    """The mean character recall, precision and IoU over the cases whose answer is a span."""

    span_cases: int
    recall: float | None
    """None: no case's answer is a span."""
    precision: float | None
    iou: float | None

    @classmethod
    def of(cls, overlaps: Sequence[CharOverlap]) -> CharacterSummary:
        """The means over ``overlaps``, one per span case."""
        if not overlaps:
            return cls(0, None, None, None)
        count = len(overlaps)
        return cls(
            count,
            sum(overlap.recall for overlap in overlaps) / count,
            sum(overlap.precision for overlap in overlaps) / count,
            sum(overlap.iou for overlap in overlaps) / count,
        )


def merged(spans: Iterable[Span]) -> dict[str, list[tuple[int, int]]]:
    """Each file's spans, sorted, with touching and overlapping ones joined; empty spans dropped."""
    by_path: dict[str, list[tuple[int, int]]] = {}
    for path, start, end in spans:
        if end > start:
            by_path.setdefault(path, []).append((start, end))
    joined: dict[str, list[tuple[int, int]]] = {}
    for path, ranges in by_path.items():
        ranges.sort()
        out = [ranges[0]]
        for start, end in ranges[1:]:
            last_start, last_end = out[-1]
            if start <= last_end:
                out[-1] = (last_start, max(last_end, end))
            else:
                out.append((start, end))
        joined[path] = out
    return joined


def _length(ranges: dict[str, list[tuple[int, int]]]) -> int:
    return sum(end - start for spans in ranges.values() for start, end in spans)


def _shared(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """Characters in both of two sorted, disjoint span lists of one file (one pass over each)."""
    shared, i, j = 0, 0, 0
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        shared += max(0, end - start)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return shared


def char_overlap(answer: Iterable[Span], retrieved: Iterable[Span]) -> CharOverlap:
    """The answer's characters against the retrieved characters."""
    wanted, got = merged(answer), merged(retrieved)
    shared = sum(_shared(spans, got[path]) for path, spans in wanted.items() if path in got)
    return CharOverlap(_length(wanted), _length(got), shared)
