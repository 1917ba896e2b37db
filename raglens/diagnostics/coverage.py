"""What the model never reads: characters past every window's token limit.

A window longer than the model's limit is embedded from its first tokens only; the tail is silently
ignored. When that tail ends before the next window starts, no embedding sees those characters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from raglens.embedding_events import DEFAULT_MODEL_NAME, ReadingExtent
from raglens.fingerprint import max_seq_length_of, model_folder
from raglens.tokens import TokenCounter
from raglens.windows import Window, as_columns


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
    pairs = zip(windows, extents, strict=True)
    return _suggested_size([extent.chars_read for window, extent in pairs if is_truncated(window, extent)])


def _suggested_size(truncated_reads: list[int]) -> int | None:
    """:func:`suggest_window_size` from the characters read of each truncated window."""
    if not truncated_reads:
        return None
    read = sorted(truncated_reads)
    quartile = read[max(0, math.ceil(len(read) / 4) - 1)]
    return max(50, quartile // 50 * 50)


def corpus_coverage(
    file_lengths: dict[str, int],
    windows: Sequence[Window],
    chars_read: Sequence[int],
    token_limit: int | None,
) -> CorpusCoverage:
    """Coverage of every file in ``file_lengths`` (path to characters), in that order, from the characters
    the model read of each window.

    Read from the windows' columns, as plain integers: at 100k windows, an extent object and a pair per
    window were 200k more objects for the garbage collector while the explorer's worker ran this.
    """
    columns = as_columns(windows)
    starts = columns.starts().tolist()
    lengths = columns.lengths().tolist()
    read = list(chars_read)
    if len(read) != len(lengths):
        raise ValueError(f"{len(read)} reading extents for {len(lengths)} windows")
    rows = columns.file_rows()
    files = []
    for path, length in file_lengths.items():
        span = rows.get(path, range(0))
        truncated = sum(read[row] < lengths[row] for row in span)
        reads = ((starts[row], starts[row] + min(read[row], lengths[row])) for row in span if read[row] > 0)
        files.append(FileCoverage(path, length, _unread(length, reads), len(span), truncated))
    truncated_reads = [got for got, length in zip(read, lengths, strict=True) if got < length]
    return CorpusCoverage(tuple(files), token_limit, _suggested_size(truncated_reads))


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
    first_with_text: dict[str, str] = {}
    read_as = {path: first_with_text.setdefault(text, path) for path, text in file_texts.items()}

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
    lengths = {path: len(text) for path, text in file_texts.items()}
    read = [extent_of[key(window)].chars_read for window in windows]
    return corpus_coverage(lengths, windows, read, counter.content_limit)


def token_counter_for(model: str | None) -> TokenCounter | None:
    """A token counter for ``model`` (None: the bundled one), or None when its files are not here."""
    folder = model_folder(model)
    if folder is None or not (folder / "tokenizer.json").is_file():
        return None
    return TokenCounter(folder, model or DEFAULT_MODEL_NAME, max_seq_length_of(folder))
