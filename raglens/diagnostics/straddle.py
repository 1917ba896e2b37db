"""Answers cut by the window grid: neighbouring windows of one file that both rank among the hits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from raglens.printable import printable_name
from raglens.search import Hit


@dataclass(frozen=True)
class Straddle:
    """Two neighbouring windows of one file, both among the top hits."""

    first: Hit
    """The window that starts earlier in the file."""
    second: Hit

    @property
    def path(self) -> str:
        return self.first.window.path

    @property
    def cut(self) -> tuple[int, int]:
        """The characters both windows hold (their overlap), or an empty span at the boundary."""
        start = self.second.window.start
        return start, max(start, self.first.window.end)

    def describe(self) -> str:
        line, first, second = self.second.window.line_start, self.first.window, self.second.window
        return (
            f"{printable_name(self.path)}: windows {first.index + 1} and {second.index + 1} "
            f"both rank (#{self.first.rank} {self.first.score:.3f}, #{self.second.rank} "
            f"{self.second.score:.3f}): the answer may straddle the cut at line {line}"
        )


def find_straddles(hits: Sequence[Hit]) -> list[Straddle]:
    """Every pair of hits that are adjacent windows of one file, in order of the better one's rank."""
    by_place = {(hit.window.path, hit.window.index): hit for hit in hits}
    found = []
    for hit in hits:
        following = by_place.get((hit.window.path, hit.window.index + 1))
        if following is not None:
            found.append(Straddle(hit, following))
    found.sort(key=lambda s: min(s.first.rank, s.second.rank))
    return found
