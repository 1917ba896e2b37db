from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raglens.diagnostics.coverage import corpus_coverage, suggest_window_size, unread_spans
from raglens.embedding_events import ReadingExtent
from raglens.windows import Unit, Window, WindowParams, cut_windows


def brute_force_unread(length: int, windows: list[Window], extents: list[ReadingExtent]) -> set[int]:
    read = set()
    for window, extent in zip(windows, extents, strict=True):
        read.update(range(window.start, window.start + min(extent.chars_read, window.length)))
    return set(range(length)) - read


@given(
    st.integers(1, 400),
    st.integers(2, 60),
    st.data(),
)
def test_unread_spans_are_exactly_the_characters_no_window_reads(
    length: int, size: int, data: st.DataObject
) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    windows = cut_windows("f.txt", "x" * length, WindowParams(Unit.CHARS, size, overlap))
    extents = [ReadingExtent(0, data.draw(st.integers(0, w.length))) for w in windows]
    spans = unread_spans(length, windows, extents)
    covered = {offset for start, end in spans for offset in range(start, end)}
    assert covered == brute_force_unread(length, windows, extents)
    assert all(start < end for start, end in spans)
    assert all(a[1] < b[0] for a, b in itertools.pairwise(spans))  # disjoint, merged


@given(st.lists(st.integers(0, 300), min_size=1, max_size=5), st.integers(2, 60), st.data())
def test_a_corpus_s_coverage_is_each_file_s_read_from_the_columns(
    lengths: list[int], size: int, data: st.DataObject
) -> None:
    """The oracle: each file's characters no window reads, counted one by one from window objects."""
    from raglens.windows import WindowColumns

    params = WindowParams(Unit.CHARS, size, data.draw(st.integers(0, size - 1)))
    files = {f"f{number}.txt": "x" * length for number, length in enumerate(lengths)}
    columns = WindowColumns.cut(files.items(), params)
    read = [data.draw(st.integers(0, window.length + 3)) for window in columns]
    coverage = corpus_coverage({path: len(text) for path, text in files.items()}, columns, read, 256)
    for path, text in files.items():
        windows = [window for window in columns if window.path == path]
        extents = [
            ReadingExtent(0, got) for window, got in zip(columns, read, strict=True) if window.path == path
        ]
        entry = coverage.file(path)
        assert entry is not None and entry.window_count == len(windows)
        unread = {offset for start, end in entry.unread_spans for offset in range(start, end)}
        assert unread == brute_force_unread(len(text), windows, extents)
        assert entry.unread_spans == unread_spans(len(text), windows, extents), "merged, in order"
        assert entry.truncated_count == sum(
            e.chars_read < w.length for w, e in zip(windows, extents, strict=True)
        )
    cut_reads = sorted(got for window, got in zip(columns, read, strict=True) if got < window.length)
    lower_quartile = cut_reads[max(0, -(-len(cut_reads) // 4) - 1)] if cut_reads else None
    assert coverage.suggested_size == (None if lower_quartile is None else max(50, lower_quartile // 50 * 50))
    with pytest.raises(ValueError, match="reading extents for"):
        corpus_coverage({}, columns, [*read, 1], 256)


def test_a_truncated_tail_before_the_next_window_is_unread() -> None:
    # Windows of 10 every 8 characters: the model reads 5 of each, so 5..8 and 13..16 are lost.
    windows = cut_windows("f.txt", "y" * 20, WindowParams(Unit.CHARS, 10, 2))
    extents = [ReadingExtent(30, 5) for _ in windows]
    coverage = corpus_coverage({"f.txt": 20}, windows, [extent.chars_read for extent in extents], 256)
    assert [(w.start, w.end) for w in windows] == [(0, 10), (8, 18), (16, 20)]
    assert coverage.files[0].unread_spans == ((5, 8), (13, 16))
    assert coverage.unread_characters == 6
    assert coverage.unread_share == 6 / 20
    assert coverage.truncated_count == 2  # the last window is only 4 long: read whole


def test_suggested_size_is_the_lower_quartile_of_what_was_read() -> None:
    windows = [Window("f", Unit.CHARS, i, 0, 1000, 1, 1) for i in range(4)]
    extents = [ReadingExtent(300, read) for read in (720, 800, 900, 990)]
    assert suggest_window_size(windows, extents) == 700
    whole = [ReadingExtent(10, 1000) for _ in windows]
    assert suggest_window_size(windows, whole) is None


def test_coverage_measured_in_batches_is_the_coverage_of_every_window_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from raglens.corpus import CorpusOptions, load_corpus
    from raglens.diagnostics import coverage
    from raglens.windows import WindowParams, cut_corpus
    from tests.conftest import SAMPLE_CORPUS

    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    windows = cut_corpus(corpus, WindowParams())
    counter = coverage.token_counter_for(None)
    assert counter is not None
    texts = corpus.texts()
    at_once = coverage.corpus_coverage(
        {path: len(text) for path, text in texts.items()},
        windows,
        [
            extent.chars_read
            for extent in counter.reading_extents([w.text_in(texts[w.path]) for w in windows])
        ],
        counter.content_limit,
    )
    monkeypatch.setattr(coverage, "COVERAGE_BATCH", 7)
    heard: list[tuple[int, int]] = []
    in_batches = coverage.measure_coverage(
        texts, windows, counter, lambda done, total: heard.append((done, total))
    )
    assert in_batches == at_once
    total = len(windows)
    assert heard[0] == (0, total) and heard[-1] == (total, total) and len(heard) == 1 + -(-total // 7)
    assert [done for done, _ in heard] == sorted(done for done, _ in heard)


def test_a_file_s_twin_is_read_once_and_covered_like_it() -> None:
    """Copies of a file share their windows' extents; every window still gets the extent of its text."""
    from raglens.corpus import CorpusOptions, load_corpus
    from raglens.diagnostics import coverage
    from raglens.windows import WindowParams, cut_corpus
    from tests.conftest import SAMPLE_CORPUS

    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    counter = coverage.token_counter_for(None)
    assert counter is not None
    originals = dict(corpus.texts())
    first, second = list(originals)[:2]
    texts = {**originals, "copy/a": originals[first], "copy/b": originals[second], "copy/c": originals[first]}
    params = WindowParams()
    windows = [w for path, text in texts.items() for w in cut_windows(path, text, params)]
    assert len(windows) > len(cut_corpus(corpus, params))
    read: list[str] = []

    class Recording:
        content_limit = counter.content_limit

        def reading_extents(self, batch: list[str]) -> list[ReadingExtent]:
            read.extend(batch)
            return counter.reading_extents(batch)

    heard: list[tuple[int, int]] = []
    measured = coverage.measure_coverage(
        texts,
        windows,
        Recording(),
        lambda done, total: heard.append((done, total)),  # type: ignore[arg-type]
    )
    every_window = [w.text_in(texts[w.path]) for w in windows]
    assert measured == coverage.corpus_coverage(
        {path: len(text) for path, text in texts.items()},
        windows,
        [extent.chars_read for extent in counter.reading_extents(every_window)],
        counter.content_limit,
    )
    assert sorted(read) == sorted(w.text_in(originals[w.path]) for w in cut_corpus(corpus, params))
    assert heard[-1] == (len(read), len(read))


def test_files_listed_in_another_order_or_without_windows_are_each_measured_alone() -> None:
    """One running maximum serves every file only if each keeps to its own offsets: listed in reverse,
    with a file no window was cut from and a window set holding a file that is not asked about."""
    from raglens.windows import WindowColumns

    texts = {"a.txt": "a" * 50, "b.txt": "b" * 35, "c.txt": "c" * 20}
    columns = WindowColumns.cut(texts.items(), WindowParams(Unit.CHARS, 10, 2))
    read = [3 if window.path == "b.txt" else 10 for window in columns]
    asked = {"c.txt": 20, "empty.txt": 0, "new.txt": 7, "b.txt": 35}
    coverage = corpus_coverage(asked, columns, read, 256)
    assert [entry.path for entry in coverage.files] == list(asked)
    b_windows = [window for window in columns if window.path == "b.txt"]
    expected_b = unread_spans(35, b_windows, [ReadingExtent(0, 3)] * len(b_windows))
    assert coverage.file("b.txt").unread_spans == expected_b  # type: ignore[union-attr]
    assert coverage.file("c.txt").unread_spans == ()  # type: ignore[union-attr]
    assert coverage.file("new.txt").unread_spans == ((0, 7),)  # type: ignore[union-attr]
    assert coverage.file("empty.txt").unread_spans == ()  # type: ignore[union-attr]
    assert coverage.file("a.txt") is None
    assert coverage.file("b.txt").truncated_count == sum(window.length > 3 for window in b_windows)  # type: ignore[union-attr]
