"""What the model never reads: characters past every window's token limit.

A window longer than the model's limit is embedded from its first tokens only; the tail is silently
ignored. When that tail ends before the next window starts, no embedding sees those characters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from raglens.corpus import FileTexts
from raglens.embedding_events import DEFAULT_MODEL_NAME, ReadingExtent
from raglens.fingerprint import max_seq_length_of, model_folder
from raglens.tokens import TokenCounter
from raglens.windows import Window, as_columns

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class FileCoverage:
    """How much of one file the model reads through its windows."""

    path: str
    characters: int
    unread_spans: tuple[tuple[int, int], ...]
    """(start, end) offsets of the characters that no window's embedding reads, in order."""
    window_count: int
    truncated_count: int
    """Windows the model stops reading before their end."""

    @property
    def unread_characters(self) -> int:
        return sum(end - start for start, end in self.unread_spans)

    @property
    def unread_share(self) -> float:
        """The share of the file's characters no embedding sees, 0..1."""
        return self.unread_characters / self.characters if self.characters else 0.0


@dataclass(frozen=True)
class CorpusCoverage:
    """Coverage of every file, and what window size would fit the model."""

    files: tuple[FileCoverage, ...]
    token_limit: int | None
    """Tokens of text the model reads per window, or None when it reads everything."""
    suggested_size: int | None
    """Characters that three windows in four fit whole, when windows are truncated; else None."""
    _by_path: dict[str, FileCoverage] = field(init=False, repr=False, compare=False)

    @property
    def characters(self) -> int:
        return sum(entry.characters for entry in self.files)

    @property
    def unread_characters(self) -> int:
        return sum(entry.unread_characters for entry in self.files)

    @property
    def unread_share(self) -> float:
        return self.unread_characters / self.characters if self.characters else 0.0

    @property
    def window_count(self) -> int:
        return sum(entry.window_count for entry in self.files)

    @property
    def truncated_count(self) -> int:
        return sum(entry.truncated_count for entry in self.files)

    @property
    def truncated_share(self) -> float:
        return self.truncated_count / self.window_count if self.window_count else 0.0

    def __post_init__(self) -> None:
        # A scan per look-up made listing 10,000 files take 1.8 s in look-ups alone.
        object.__setattr__(self, "_by_path", {entry.path: entry for entry in self.files})

    def file(self, path: str) -> FileCoverage | None:
        """The coverage of the file at ``path``; None for a file it does not cover (a skipped one)."""
        return self._by_path.get(path)


def is_truncated(window: Window, extent: ReadingExtent) -> bool:
    """Whether the model stops reading ``window`` before its end."""
    return extent.chars_read < window.length


def unread_spans(
    text_length: int, windows: Sequence[Window], extents: Sequence[ReadingExtent]
) -> tuple[tuple[int, int], ...]:
    """The spans of a text of ``text_length`` characters that no window's read part covers."""
    reads = (
        (window.start, window.start + min(extent.chars_read, window.length))
        for window, extent in zip(windows, extents, strict=True)
        if extent.chars_read > 0
    )
    return _unread(text_length, reads)


def _unread(text_length: int, reads: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """The spans of a text of ``text_length`` characters outside every (start, end) of ``reads``."""
    spans: list[tuple[int, int]] = []
    position = 0
    for start, end in sorted(reads):
        if start > position:
            spans.append((position, start))
        position = max(position, end)
    if position < text_length:
        spans.append((position, text_length))
    return tuple(spans)


def suggest_window_size(windows: Sequence[Window], extents: Sequence[ReadingExtent]) -> int | None:
    """A window size in characters that the model would read whole three times in four.

    From what it did read of each truncated window (the characters its token limit holds), the
    lower quartile, rounded down to 50; None when no window is truncated.
    """
    import numpy as np

    pairs = zip(windows, extents, strict=True)
    truncated = [extent.chars_read for window, extent in pairs if is_truncated(window, extent)]
    return _suggested_size(np.array(truncated, dtype=np.int64))


def corpus_coverage(
    file_lengths: dict[str, int],
    windows: Sequence[Window],
    chars_read: Sequence[int] | np.ndarray,
    token_limit: int | None,
) -> CorpusCoverage:
    """Coverage of every file in ``file_lengths`` (path to characters), in that order, from the characters
    the model read of each window.

    Worked out on the windows' columns with numpy, one pass over the corpus: the explorer measures
    it in a thread after every re-scan, and at 100k windows the loops over each window's numbers held
    the interpreter from the event loop for ~0.1 s each time. Every file's offsets are shifted past
    the files before it, so that one running maximum of where reading ended finds every file's gaps.
    """
    import numpy as np

    columns = as_columns(windows)
    starts, lengths = columns.starts(), columns.lengths()
    read = np.asarray(chars_read, dtype=np.int64)
    if read.shape != lengths.shape:
        raise ValueError(f"{len(read)} reading extents for {len(lengths)} windows")
    file_rows = columns.file_rows()
    spans = [file_rows.get(path, range(0)) for path in file_lengths]
    file_count = len(spans)
    counts = np.fromiter((len(span) for span in spans), dtype=np.int64, count=file_count)
    firsts = np.fromiter((span.start for span in spans), dtype=np.int64, count=file_count)
    sizes = np.fromiter(file_lengths.values(), dtype=np.int64, count=file_count)
    bases = np.concatenate([np.zeros(1, np.int64), np.cumsum(sizes)])  # file i is bases[i]..bases[i + 1]
    file_of = np.repeat(np.arange(file_count), counts)
    rows = np.arange(len(file_of)) - np.repeat(np.cumsum(counts) - counts, counts) + np.repeat(firsts, counts)
    truncated = read[rows] < lengths[rows]

    reading = read[rows] > 0
    order = np.lexsort((starts[rows][reading], file_of[reading]))
    read_rows, read_files = rows[reading][order], file_of[reading][order]
    ceiling = bases[read_files + 1]
    began = np.minimum(starts[read_rows] + bases[read_files], ceiling)
    ended = np.minimum(began + np.minimum(read[read_rows], lengths[read_rows]), ceiling)
    reached = np.maximum.accumulate(ended)
    before = np.maximum(np.concatenate([np.zeros(1, np.int64), reached[:-1]]), bases[read_files])
    inner = began > before
    last_end = bases[:-1].copy()
    np.maximum.at(last_end, read_files, ended)
    tail = last_end < bases[1:]
    gap_files = np.concatenate([read_files[inner], np.flatnonzero(tail)])
    gap_starts = np.concatenate([before[inner], last_end[tail]])
    gap_ends = np.concatenate([began[inner], bases[1:][tail]])
    gap_order = np.lexsort((gap_starts, gap_files))
    gap_files = gap_files[gap_order]
    local = bases[gap_files]
    gap_starts, gap_ends = (gap_starts[gap_order] - local).tolist(), (gap_ends[gap_order] - local).tolist()
    gaps = list(zip(gap_starts, gap_ends, strict=True))
    gap_bounds = np.concatenate(
        [np.zeros(1, np.int64), np.cumsum(np.bincount(gap_files, minlength=file_count))]
    )
    truncated_counts = np.bincount(file_of[truncated], minlength=file_count)

    files = [
        FileCoverage(path, length, tuple(gaps[first:after]), window_count, truncated_count)
        for path, length, first, after, window_count, truncated_count in zip(
            file_lengths,
            file_lengths.values(),
            gap_bounds[:-1].tolist(),
            gap_bounds[1:].tolist(),
            counts.tolist(),
            truncated_counts.tolist(),
            strict=True,
        )
    ]
    return CorpusCoverage(tuple(files), token_limit, _suggested_size(read[read < lengths]))


def _suggested_size(truncated_reads: np.ndarray) -> int | None:
    """:func:`suggest_window_size` from the characters read of each truncated window (an array:
    partitioned, where a sort of 100k Python ints held the interpreter ~10 ms)."""
    import numpy as np

    if not len(truncated_reads):
        return None
    quartile_at = max(0, math.ceil(len(truncated_reads) / 4) - 1)
    quartile = int(np.partition(truncated_reads, quartile_at)[quartile_at])
    return max(50, quartile // 50 * 50)


COVERAGE_BATCH = 1024
"""Windows tokenised at a time: the tokenizer's encodings of a whole corpus at once took 2.8 GB at
100k windows; a batch's are dropped before the next, so they take the same memory at any size (the
extents kept, two numbers a window, still grow with the corpus)."""


def measure_coverage(
    file_texts: Mapping[str, str],
    windows: Sequence[Window],
    counter: TokenCounter,
    on_progress: Callable[[int, int], None] | None = None,
) -> CorpusCoverage:
    """Coverage of a corpus's windows, tokenised with the model's own tokenizer (no model needed),
    COVERAGE_BATCH windows at a time; ``on_progress(done, total)`` hears each batch (and 0 first).

    A window of a file whose text an earlier file has too (a copy, a vendored twin) is the same text
    as that file's window at the same offsets, so it is tokenised once; ``total`` counts those read.
    """
    # A corpus's texts are told apart as held (raglens.held_text), not decoded all at once.
    held = file_texts.held if isinstance(file_texts, FileTexts) else file_texts.__getitem__
    length = file_texts.length if isinstance(file_texts, FileTexts) else lambda path: len(file_texts[path])
    first_with_text: dict[str | bytes, str] = {}
    read_as = {path: first_with_text.setdefault(held(path), path) for path in file_texts}

    def key(window: Window) -> tuple[str, int, int]:
        return read_as[window.path], window.start, window.end

    first_of_key: dict[tuple[str, int, int], Window] = {}
    for window in windows:
        first_of_key.setdefault(key(window), window)
    to_read = list(first_of_key.values())
    extent_of: dict[tuple[str, int, int], ReadingExtent] = {}
    total = len(to_read)
    if on_progress is not None:
        on_progress(0, total)
    for start in range(0, total, COVERAGE_BATCH):
        batch = to_read[start : start + COVERAGE_BATCH]
        extents = counter.reading_extents([w.text_in(file_texts[w.path]) for w in batch])
        extent_of.update(zip(map(key, batch), extents, strict=True))
        if on_progress is not None:
            on_progress(len(extent_of), total)
    lengths = {path: length(path) for path in file_texts}
    read = [extent_of[key(window)].chars_read for window in windows]
    return corpus_coverage(lengths, windows, read, counter.content_limit)


def token_counter_for(model: str | None) -> TokenCounter | None:
    """A token counter for ``model`` (None: the bundled one), or None when its files are not here."""
    folder = model_folder(model)
    if folder is None or not (folder / "tokenizer.json").is_file():
        return None
    return TokenCounter(folder, model or DEFAULT_MODEL_NAME, max_seq_length_of(folder))
