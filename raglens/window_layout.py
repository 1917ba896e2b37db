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


@dataclass(frozen=True)
class LaidOutLine:
    """One line of the file as printable segments, each with its band."""

    number: int
    segments: tuple[tuple[str, Band], ...]


def _strip_line_break(start: int, end: int, text: str) -> int:
    """The end of a line's content, before its CRLF, CR or LF."""
    if end > start and text[end - 1] == "\n":
        end -= 1
    if end > start and text[end - 1] == "\r":
        end -= 1
    return end


def lay_out(
    text: str,
    windows: Sequence[Window],
    current: int | None = None,
    chars_read: int | None = None,
) -> list[LaidOutLine]:
    """Every line of ``text`` split into segments by window boundaries, overlaps and the read limit.

    ``windows`` are one file's windows in order; ``current`` is the index of the selected one and
    ``chars_read`` how many of its characters the model reads (None: all of them).
    """
    starts = [w.start for w in windows]
    ends = [w.end for w in windows]
    cuts: set[int] = {*starts, *ends}
    unread_from: int | None = None
    if current is not None:
        selected = windows[current]
        read = selected.length if chars_read is None else chars_read
        unread_from = selected.start + read
        cuts.add(unread_from)

    def band_at(offset: int) -> Band:
        first = bisect_right(ends, offset)  # the first window that ends after offset
        last = bisect_right(starts, offset) - 1  # the last window that starts at or before it
        covering = last - first + 1
        if covering <= 0:
            return Band.OUTSIDE
        if current is not None and first <= current <= last:
            assert unread_from is not None
            if offset >= unread_from:
                return Band.UNREAD
            return Band.CURRENT_OVERLAP if covering > 1 else Band.CURRENT
        if covering > 1:
            return Band.OVERLAP
        return Band.EVEN if first % 2 == 0 else Band.ODD

    ordered_cuts = sorted(cuts)
    lines: list[LaidOutLine] = []
    for number, (line_start, line_end) in enumerate(LineIndex(text).line_spans(), start=1):
        content_end = _strip_line_break(line_start, line_end, text)
        points = [line_start]
        cut = bisect_right(ordered_cuts, line_start)
        while cut < len(ordered_cuts) and ordered_cuts[cut] < content_end:
            points.append(ordered_cuts[cut])
            cut += 1
        points.append(content_end)
        segments = tuple((printable(text[a:b]), band_at(a)) for a, b in pairwise(points) if b > a)
        lines.append(LaidOutLine(number, segments))
    return lines
