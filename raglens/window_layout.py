"""Lay a file's windows over its lines: which characters are in one window, an overlap, or unread."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from itertools import pairwise

from raglens.lines import LineIndex
from raglens.printable import printable
from raglens.windows import Window


class Band(str, Enum):
    """What a stretch of text is, seen through the window grid."""

    OUTSIDE = "outside"
    """In no window (only whitespace windows were dropped there)."""
    EVEN = "even"
    """In exactly one window, whose index is even."""
    ODD = "odd"
    """In exactly one window, whose index is odd."""
    OVERLAP = "overlap"
    """In two windows."""
    CURRENT = "current"
    """In the selected window, and read by the model."""
    CURRENT_OVERLAP = "current-overlap"
    """In the selected window and its neighbour, and read by the model."""
    UNREAD = "unread"
    """In the selected window but past the model's token limit: embedded as if it were not there."""
    NEVER_READ = "never-read"
    """Past the token limit of every window that holds it: no embedding of the corpus sees it."""


@dataclass(frozen=True)
class LaidOutLine:
    """One line of the file as printable segments, each with its band."""

    number: int
    segments: tuple[tuple[str, Band], ...]
    heats: tuple[float | None, ...] = ()
    """With heat on, the best score of the windows holding each segment (None: none embedded)."""


def _strip_line_break(start: int, end: int, text: str) -> int:
    """The end of a line's content, before its CRLF, CR or LF."""
    if end > start and text[end - 1] == "\n":
        end -= 1
    if end > start and text[end - 1] == "\r":
        end -= 1
    return end


class FileLayout:
    """One file's lines seen through its window grid, each line laid out only when it is asked for.

    Laying out a whole 1 MB file takes ~0.2 s; a view shows ~40 lines at a time, so it asks for those.
    ``windows`` are the file's windows in order; ``current`` is the index of the selected one and
    ``chars_read`` how many of its characters the model reads (None: all of them).
    """

    def __init__(
        self,
        text: str,
        windows: Sequence[Window],
        current: int | None = None,
        chars_read: int | None = None,
        lines: LineIndex | None = None,
        never_read: Sequence[tuple[int, int]] = (),
        heat: Sequence[float | None] | None = None,
        cut_lines: frozenset[int] = frozenset(),
        other_starts: frozenset[int] = frozenset(),
    ) -> None:
        self.text = text
        self.cut_lines = cut_lines
        self.other_starts = other_starts
        """Lines where a window of another configuration (B) starts: its grid over this one."""
        """Lines shared by two neighbouring windows that both rank: an answer may be cut there."""
        self.heat = tuple(heat) if heat is not None else None
        """One score per window for the current query, to colour the file by; None: heat is off."""
        if self.heat is not None and len(self.heat) != len(windows):
            raise ValueError(f"{len(self.heat)} heat scores for {len(windows)} windows")
        self.windows = windows
        self.current = current
        self.lines = lines if lines is not None else LineIndex(text)
        """The file's line index; pass one in to reuse it across layouts of the same text."""
        self._starts = [w.start for w in windows]
        self._ends = [w.end for w in windows]
        cuts: set[int] = {*self._starts, *self._ends}
        self.never_read = tuple(never_read)
        """Sorted, disjoint (start, end) spans no window's embedding reads."""
        self._never_starts = [start for start, _ in self.never_read]
        cuts.update(offset for span in self.never_read for offset in span)
        self.unread_from: int | None = None
        """The offset where the model stops reading the selected window, if one is selected."""
        if current is not None:
            selected = windows[current]
            read = selected.length if chars_read is None else chars_read
            self.unread_from = selected.start + read
            cuts.add(self.unread_from)
        self._cuts = sorted(cuts)

    @property
    def line_count(self) -> int:
        return self.lines.line_count

    @property
    def current_lines(self) -> range:
        """The line numbers of the selected window; empty when none is selected."""
        if self.current is None:
            return range(0)
        window = self.windows[self.current]
        return range(window.line_start, window.line_end + 1)

    def band_at(self, offset: int) -> Band:
        """What the character at ``offset`` is, seen through the grid."""
        first = bisect_right(self._ends, offset)  # the first window that ends after offset
        last = bisect_right(self._starts, offset) - 1  # the last window that starts at or before it
        covering = last - first + 1
        if covering <= 0:
            return Band.OUTSIDE
        span = bisect_right(self._never_starts, offset) - 1
        if span >= 0 and offset < self.never_read[span][1]:
            return Band.NEVER_READ
        if self.current is not None and first <= self.current <= last:
            assert self.unread_from is not None
            if offset >= self.unread_from:
                return Band.UNREAD
            return Band.CURRENT_OVERLAP if covering > 1 else Band.CURRENT
        if covering > 1:
            return Band.OVERLAP
        return Band.EVEN if first % 2 == 0 else Band.ODD

    def heat_at(self, offset: int) -> float | None:
        """The best score among the windows holding ``offset``; None without heat or a score."""
        if self.heat is None:
            return None
        first = bisect_right(self._ends, offset)
        last = bisect_right(self._starts, offset) - 1
        scores = [score for score in self.heat[first : last + 1] if score is not None]
        return max(scores) if scores else None

    def line(self, number: int) -> LaidOutLine:
        """The 1-based line ``number`` split into printable segments at every boundary it crosses."""
        line_start, line_end = self.lines.line_span(number)
        content_end = _strip_line_break(line_start, line_end, self.text)
        points = [line_start]
        cut = bisect_right(self._cuts, line_start)
        while cut < len(self._cuts) and self._cuts[cut] < content_end:
            points.append(self._cuts[cut])
            cut += 1
        points.append(content_end)
        spans = [(a, b) for a, b in pairwise(points) if b > a]
        segments = tuple((printable(self.text[a:b]), self.band_at(a)) for a, b in spans)
        heats = tuple(self.heat_at(a) for a, _ in spans) if self.heat is not None else ()
        return LaidOutLine(number, segments, heats)


def lay_out(
    text: str,
    windows: Sequence[Window],
    current: int | None = None,
    chars_read: int | None = None,
    never_read: Sequence[tuple[int, int]] = (),
) -> list[LaidOutLine]:
    """Every line of ``text`` laid out at once (see :class:`FileLayout`)."""
    layout = FileLayout(text, windows, current, chars_read, never_read=never_read)
    return [layout.line(number) for number in range(1, layout.line_count + 1)]
