"""Cut a text into fixed, overlapping windows of characters, words or lines."""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from raglens.errors import BadInputError
from raglens.lines import LineIndex

if TYPE_CHECKING:
    from raglens.corpus import Corpus

_NON_SPACE = re.compile(r"\S")
_WORD = re.compile(r"\S+")


class Unit(str, Enum):
    """What a window's size and overlap count."""

    CHARS = "chars"
    WORDS = "words"
    LINES = "lines"


DEFAULT_SIZE_AND_OVERLAP: dict[Unit, tuple[int, int]] = {
    Unit.CHARS: (1000, 200),
    Unit.WORDS: (200, 20),
    Unit.LINES: (40, 8),
}
"""Sizes that match the two seeds: rung 1's 1000/200 characters and the 200/20 word windows."""


@dataclass(frozen=True)
class WindowParams:
    """How to cut: the unit, the window size and the overlap between neighbours, in that unit."""

    unit: Unit = Unit.CHARS
    size: int = 1000
    overlap: int = 200

    def __post_init__(self) -> None:
        if self.size <= 0:
            raise BadInputError(f"window size must be at least 1 {self.unit.value}, got {self.size}")
        if self.overlap < 0:
            raise BadInputError(f"window overlap cannot be negative, got {self.overlap}")
        if self.overlap >= self.size:
            raise BadInputError(
                f"window overlap ({self.overlap}) must be smaller than the size ({self.size}), "
                "or windows would never advance"
            )

    @classmethod
    def for_unit(cls, unit: Unit | str, size: int | None = None, overlap: int | None = None) -> WindowParams:
        """Parameters for ``unit``, with that unit's defaults for whatever is not given."""
        try:
            chosen = Unit(unit)
        except ValueError:
            known = ", ".join(u.value for u in Unit)
            raise BadInputError(f"unknown window unit {unit!r}; choose one of {known}") from None
        default_size, default_overlap = DEFAULT_SIZE_AND_OVERLAP[chosen]
        if size is None:
            size = default_size
        if overlap is None:
            # Keep the default's proportion when only the size was given, so --size 300 just works.
            overlap = default_overlap if size == default_size else size * default_overlap // default_size
        return cls(chosen, size, overlap)

    @property
    def step(self) -> int:
        """How far each window starts after the previous one, in units."""
        return self.size - self.overlap

    def describe(self) -> str:
        """A short human label such as ``1000/200 chars``."""
        return f"{self.size}/{self.overlap} {self.unit.value}"


@dataclass(frozen=True, slots=True)
class Window:
    """One window of one file: offsets into the file's text, never a copy of it.

    Slotted: a corpus of 100k windows holds 100k of these, 96 bytes each instead of 144.
    """

    path: str
    """The file's path relative to the corpus root, with forward slashes."""
    unit: Unit
    index: int
    """Position among the kept windows of its file, from 0."""
    start: int
    """Offset of the first character; ``text[start:end]`` is the window."""
    end: int
    line_start: int
    """1-based line of the first character."""
    line_end: int
    """1-based line of the last character."""

    @property
    def citation(self) -> str:
        """Where the window is, as ``path:Lstart-Lend``."""
        return f"{self.path}:L{self.line_start}-L{self.line_end}"

    @property
    def length(self) -> int:
        """How many characters the window spans."""
        return self.end - self.start

    def text_in(self, file_text: str) -> str:
        """The window's characters, sliced from its file's text."""
        return file_text[self.start : self.end]


def word_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of every word: a maximal run of non-whitespace characters."""
    return [match.span() for match in _WORD.finditer(text)]


def _grid(unit_count: int, params: WindowParams) -> list[tuple[int, int]]:
    """Unit ranges [first, last) of every window: from 0, a step apart, until one reaches the end."""
    ranges: list[tuple[int, int]] = []
    first = 0
    while first < unit_count:
        last = min(first + params.size, unit_count)
        ranges.append((first, last))
        if last == unit_count:
            break
        first += params.step
    return ranges


def cut_windows(path: str, text: str, params: WindowParams) -> list[Window]:
    """Every window of one file's text; windows holding only whitespace are dropped."""
    offsets: list[tuple[int, int]]
    if params.unit is Unit.CHARS:
        offsets = _grid(len(text), params)
        if "\r" not in text:
            return _windows_counting_lines(path, text, params.unit, offsets)
        lines = LineIndex(text)
    else:
        lines = LineIndex(text)
        spans: Sequence[tuple[int, int]] = (
            word_spans(text) if params.unit is Unit.WORDS else lines.line_spans()
        )
        offsets = [(spans[first][0], spans[last - 1][1]) for first, last in _grid(len(spans), params)]
    windows: list[Window] = []
    for start, end in offsets:
        if not _NON_SPACE.search(text, start, end):
            continue
        windows.append(
            Window(path, params.unit, len(windows), start, end, lines.line_of(start), lines.line_of(end - 1))
        )
    return windows


def _windows_counting_lines(path: str, text: str, unit: Unit, offsets: list[tuple[int, int]]) -> list[Window]:
    """The windows at ``offsets`` (ascending) of a text whose only line break is LF, their lines counted
    from one window's start to the next: a file's line index took half the time of cutting 100k windows.
    """
    windows: list[Window] = []
    line, at = 1, 0
    for start, end in offsets:
        line += text.count("\n", at, start)
        at = start
        if not _NON_SPACE.search(text, start, end):
            continue
        last_line = line + text.count("\n", start, end - 1)
        windows.append(Window(path, unit, len(windows), start, end, line, last_line))
    return windows


def cut_corpus(corpus: Corpus, params: WindowParams) -> list[Window]:
    """Every window of every file, in corpus order."""
    return [window for source in corpus.files for window in cut_windows(source.path, source.text, params)]


def window_texts(corpus: Corpus, windows: Sequence[Window]) -> list[str]:
    """The text of each window, sliced from its file."""
    return [window.text_in(corpus.file(window.path).text) for window in windows]


def rows_by_file(windows: Sequence[Window]) -> dict[str, range]:
    """The rows of each file's windows in ``windows`` (corpus order): contiguous, since windows are
    cut file by file."""
    rows: dict[str, range] = {}
    row = 0
    for path, run in itertools.groupby(map(operator.attrgetter("path"), windows)):
        first = rows[path].start if path in rows else row
        row += sum(1 for _ in run)
        rows[path] = range(first, row)
    return rows


@dataclass(frozen=True)
class WindowSet:
    """A corpus's windows cut with one setting, the text of each, and each file's rows.

    Made together in a worker thread: the event loop that receives them finds no file's rows (that
    took 30-140 ms of it at 100k windows).
    """

    windows: list[Window]
    texts: list[str] | None
    """Each window's text; None when the set came without (its stored index is to be taken whole, and
    the texts, 0.2 s at 100k windows, are sliced only if it is not)."""
    file_rows: dict[str, range]


def cut_window_set(corpus: Corpus, params: WindowParams) -> WindowSet:
    """Cut ``corpus`` into windows with ``params``, with their texts and each file's rows."""
    windows = cut_corpus(corpus, params)
    return WindowSet(windows, window_texts(corpus, windows), rows_by_file(windows))
