"""Soft wrap for the window view: each file line split into rows that fit, without losing a character.

The rows of a line are exact slices of it as drawn, so every band, overlap, cut and unread mark
stays on the character it belongs to; a row breaks after a space when one falls in its second
half, else at the width.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

from rich.cells import get_character_cell_size
from rich.text import Text

from raglens.printable import printable

TAB_SIZE = 8


def shown_lines(text: str) -> list[str]:
    """Each line of ``text`` as the window view draws it: printable, tabs expanded to TAB_SIZE."""
    return [_expanded(line) if "\t" in line else line for line in printable(text).split("\n")]


def _expanded(line: str) -> str:
    """``line`` with tabs expanded as Rich expands them in a drawn line (by cells, not characters)."""
    shown = Text(line)
    shown.expand_tabs(TAB_SIZE)
    return shown.plain


def wrap_starts(shown: str, width: int) -> tuple[int, ...]:
    """The offsets in ``shown`` where its rows start (the first is 0) when it is wrapped to ``width`` cells.

    Every row holds at least one character and fits ``width``, unless its only visible character is
    wider than that.
    """
    width = max(width, 1)
    if shown.isascii():
        if len(shown) <= width:
            return (0,)
        starts = [0]
        start = 0
        while len(shown) - start > width:
            limit = start + width
            space = shown.rfind(" ", start + width // 2, limit)
            start = space + 1 if space >= 0 else limit
            starts.append(start)
        return tuple(starts)
    return _wrap_starts_by_cells(shown, width)


def _wrap_starts_by_cells(shown: str, width: int) -> tuple[int, ...]:
    """:func:`wrap_starts` for text with wide or zero-width characters, counting cells one by one."""
    starts = [0]
    start, used, after_space = 0, 0, -1
    for offset, char in enumerate(shown):
        cells = get_character_cell_size(char)
        if used + cells > width and offset > start:
            if after_space - start > width // 2:  # break after the space, carry the word begun
                start = after_space
                starts.append(start)
                used = sum(get_character_cell_size(c) for c in shown[start:offset])
            if used + cells > width and offset > start:  # no space, or the carried word leaves no room
                start = offset
                starts.append(start)
                used = 0
            after_space = shown.rfind(" ", start, offset) + 1 or -1
        used += cells
        if char == " ":
            after_space = offset + 1
    return tuple(starts)


class WrappedRows:
    """Which row of the view shows which piece of which line, for one text at one width."""

    def __init__(self, lines: Sequence[str], line_count: int, width: int) -> None:
        """``lines`` as :func:`shown_lines` gives them; ``line_count`` of them are shown."""
        self.width = width
        self.starts = [wrap_starts(lines[i], width) if i < len(lines) else (0,) for i in range(line_count)]
        """Per line (0-based), the offsets where its rows start."""
        self._first_rows = list(accumulate((len(starts) for starts in self.starts), initial=0))

    @property
    def row_count(self) -> int:
        return self._first_rows[-1]

    def first_row(self, number: int) -> int:
        """The row that shows the start of line ``number`` (1-based)."""
        return self._first_rows[number - 1]

    def locate(self, row: int) -> tuple[int, int]:
        """The line number (1-based) shown on ``row``, and which of its pieces (0: its start)."""
        index = bisect_right(self._first_rows, row) - 1
        return index + 1, row - self._first_rows[index]
