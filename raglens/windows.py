"""Cut a text into fixed, overlapping windows of characters, words or lines."""

from __future__ import annotations

import array
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, overload

from raglens.errors import BadInputError
from raglens.lines import LineIndex

if TYPE_CHECKING:
    import numpy as np

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


Cut = tuple[int, int, int, int]
"""Where one window lies in its file's text: start and end offsets, first and last line (1-based)."""


def cut_windows(path: str, text: str, params: WindowParams) -> list[Window]:
    """Every window of one file's text; windows holding only whitespace are dropped."""
    unit = params.unit
    return [Window(path, unit, index, *cut) for index, cut in enumerate(_cut_offsets(text, params))]


def _cut_offsets(text: str, params: WindowParams) -> Iterator[Cut]:
    """The cut of every window of ``text`` that holds more than whitespace, in order."""
    offsets: list[tuple[int, int]]
    if params.unit is Unit.CHARS:
        offsets = _grid(len(text), params)
        if "\r" not in text:
            yield from _cuts_counting_lines(text, offsets)
            return
        lines = LineIndex(text)
    else:
        lines = LineIndex(text)
        spans: Sequence[tuple[int, int]] = (
            word_spans(text) if params.unit is Unit.WORDS else lines.line_spans()
        )
        offsets = [(spans[first][0], spans[last - 1][1]) for first, last in _grid(len(spans), params)]
    for start, end in offsets:
        if _NON_SPACE.search(text, start, end):
            yield start, end, lines.line_of(start), lines.line_of(end - 1)


def _cuts_counting_lines(text: str, offsets: list[tuple[int, int]]) -> Iterator[Cut]:
    """The cuts at ``offsets`` (ascending) of a text whose only line break is LF, their lines counted
    from one window's start to the next: a file's line index took half the time of cutting 100k windows.
    """
    line, at = 1, 0
    for start, end in offsets:
        line += text.count("\n", at, start)
        at = start
        if _NON_SPACE.search(text, start, end):
            yield start, end, line, line + text.count("\n", start, end - 1)


class WindowColumns(Sequence[Window]):
    """A corpus's windows in corpus order, held as columns of integers: a ``Window`` is made when asked for.

    100k window objects were ~25 MiB, and 100k more objects for each full garbage collection to scan
    (the explorer's collections held its event loop 0.1-0.2 s at 100k windows); these columns are
    ~4 MiB and a handful of objects. A window read twice is two equal objects, not the same one:
    whether two rankings are of one set is asked of the set (``is``), never of its windows.
    """

    __slots__ = (
        "_ends",
        "_file_of",
        "_file_rows",
        "_first_rows",
        "_line_ends",
        "_line_starts",
        "_paths",
        "_starts",
        "unit",
    )

    def __init__(
        self, unit: Unit, paths: Sequence[str], counts: Iterable[int], cuts: Sequence[array.array[int]]
    ) -> None:
        """``counts[i]`` windows of the file at ``paths[i]`` in turn, their ``cuts`` as four columns
        (start, end, first line, last line), each of ``sum(counts)`` 64-bit integers."""
        self.unit = unit
        self._paths = tuple(paths)
        self._starts, self._ends, self._line_starts, self._line_ends = cuts
        self._file_rows: dict[str, range] | None = None
        self._first_rows = array.array("q")
        self._file_of = array.array("i")
        """The number of each row's file in ``_paths``."""
        row = 0
        for number, count in enumerate(counts):
            if count < 0:
                raise ValueError(f"a file of {count} windows")
            self._first_rows.append(row)
            self._file_of.extend(array.array("i", [number]) * count)
            row += count
        if len(self._first_rows) != len(self._paths) or any(len(column) != row for column in cuts):
            raise ValueError("window columns of unequal lengths")
        if len(set(self._paths)) != len(self._paths):
            raise ValueError("a file's windows come in one run, in corpus order")

    @classmethod
    def empty(cls, unit: Unit = Unit.CHARS) -> WindowColumns:
        """No windows."""
        return cls(unit, (), (), tuple(array.array("q") for _ in range(4)))

    @classmethod
    def of(cls, unit: Unit, windows: Iterable[Window]) -> WindowColumns:
        """The columns of ``windows``, given in corpus order (each file's in a run of its own); each
        window read back is numbered by its place in its file's run, as a cut numbers it."""
        paths: list[str] = []
        counts: list[int] = []
        cuts = tuple(array.array("q") for _ in range(4))
        for window in windows:
            if window.unit is not unit:
                raise ValueError(f"a window of {window.unit.value} among windows of {unit.value}")
            if not paths or paths[-1] != window.path:
                paths.append(window.path)
                counts.append(0)
            counts[-1] += 1
            cut = (window.start, window.end, window.line_start, window.line_end)
            for column, value in zip(cuts, cut, strict=True):
                column.append(value)
        return cls(unit, paths, counts, cuts)

    @classmethod
    def cut(cls, files: Iterable[tuple[str, str]], params: WindowParams) -> WindowColumns:
        """Cut each (path, text) of ``files`` into windows with ``params``; a file with none is left out."""
        paths: list[str] = []
        counts: list[int] = []
        starts, ends, line_starts, line_ends = cuts = tuple(array.array("q") for _ in range(4))
        for path, text in files:
            before = len(starts)
            for start, end, line_start, line_end in _cut_offsets(text, params):
                starts.append(start)
                ends.append(end)
                line_starts.append(line_start)
                line_ends.append(line_end)
            if len(starts) > before:
                paths.append(path)
                counts.append(len(starts) - before)
        return cls(params.unit, paths, counts, cuts)

    def __len__(self) -> int:
        return len(self._starts)

    @overload
    def __getitem__(self, row: int) -> Window: ...

    @overload
    def __getitem__(self, rows: slice) -> list[Window]: ...

    def __getitem__(self, row: int | slice) -> Window | list[Window]:
        if isinstance(row, slice):
            return [self._window(at) for at in range(len(self))[row]]
        row = operator.index(row)  # a numpy integer too, which would make the window's index one
        if row < 0:
            row += len(self)
        if not 0 <= row < len(self):
            raise IndexError(f"window row {row} outside {len(self)} windows")
        return self._window(row)

    def _window(self, row: int) -> Window:
        number = self._file_of[row]
        return Window(
            self._paths[number],
            self.unit,
            row - self._first_rows[number],
            self._starts[row],
            self._ends[row],
            self._line_starts[row],
            self._line_ends[row],
        )

    def __iter__(self) -> Iterator[Window]:
        return map(self._window, range(len(self)))

    def __repr__(self) -> str:
        return f"<WindowColumns: {len(self)} windows of {len(self._paths)} files>"

    def texts(self, file_text: Callable[[str], str]) -> list[str]:
        """The text of each window, sliced from its file's, which ``file_text`` gives for a path.

        File by file: a file's text held as UTF-8 is decoded for its windows alone, then let go.
        """
        texts: list[str] = []
        starts, ends, firsts = self._starts, self._ends, self._first_rows
        for number, path in enumerate(self._paths):
            text = file_text(path)
            rows = range(firsts[number], firsts[number + 1] if number + 1 < len(firsts) else len(self))
            texts.extend([text[starts[row] : ends[row]] for row in rows])
        return texts

    def rows_of(self, path: str) -> range:
        """The rows of the windows of the file at ``path`` (none for a file with no window): what a
        question about one file asks, without making every window to find them."""
        return self.file_rows().get(path, range(0))

    def numbered_windows_of(self, path: str) -> list[tuple[int, Window]]:
        """Each window of the file at ``path`` with its row, in order."""
        rows = self.rows_of(path)
        return list(zip(rows, self[rows.start : rows.stop], strict=True))

    def file_rows(self) -> Mapping[str, range]:
        """The rows of each file's windows (contiguous: windows are cut file by file), worked out on
        the first call (the columns never change; ~3 ms at 10k files) and shared by every later one."""
        if self._file_rows is None:
            ends = [*self._first_rows[1:], len(self)] if self._paths else []
            self._file_rows = {
                path: range(first, end)
                for path, first, end in zip(self._paths, self._first_rows, ends, strict=True)
            }
        return self._file_rows

    def columns(self) -> np.ndarray:
        """The cuts as one (4, n) int64 array: start, end, first line and last line of each window."""
        import numpy as np

        return np.stack([np.frombuffer(column, dtype=np.int64) for column in self._columns()])

    def _columns(self) -> tuple[array.array[int], ...]:
        return (self._starts, self._ends, self._line_starts, self._line_ends)

    def starts(self) -> np.ndarray:
        """Where each window starts in its file's text, as an int64 array (read-only)."""
        import numpy as np

        return np.frombuffer(self._starts, dtype=np.int64)

    def lengths(self) -> np.ndarray:
        """How many characters each window spans, as an int64 array (read-only)."""
        import numpy as np

        return np.frombuffer(self._ends, dtype=np.int64) - np.frombuffer(self._starts, dtype=np.int64)


def cut_corpus(corpus: Corpus, params: WindowParams) -> WindowColumns:
    """Every window of every file, in corpus order."""
    return WindowColumns.cut(((source.path, source.text) for source in corpus.files), params)


def window_texts(corpus: Corpus, windows: Sequence[Window]) -> list[str]:
    """The text of each window, sliced from its file."""
    return as_columns(windows).texts(lambda path: corpus.file(path).text)


def as_columns(windows: Sequence[Window]) -> WindowColumns:
    """``windows`` (corpus order) as columns: themselves where they are, else their columns."""
    if isinstance(windows, WindowColumns):
        return windows
    return WindowColumns.of(windows[0].unit if windows else Unit.CHARS, windows)


@dataclass(frozen=True)
class WindowSet:
    """A corpus's windows cut with one setting, and the text of each.

    Made in a worker thread, which also works out each file's rows (``windows.file_rows()``, kept by
    the columns): the event loop that receives them finds no file's rows (that took 30-140 ms of it at
    100k window objects).
    """

    windows: WindowColumns
    texts: list[str] | None
    """Each window's text; None when the set came without (its stored index is to be taken whole, and
    the texts, 0.2 s at 100k windows, are sliced only if it is not)."""


def cut_window_set(corpus: Corpus, params: WindowParams) -> WindowSet:
    """Cut ``corpus`` into windows with ``params``, with their texts and each file's rows."""
    windows = cut_corpus(corpus, params)
    windows.file_rows()  # here, off the event loop
    return WindowSet(windows, window_texts(corpus, windows))
