from __future__ import annotations

import re
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raglens.errors import BadInputError
from raglens.lines import LineIndex
from raglens.windows import Unit, Window, WindowParams, cut_windows, word_spans

texts = st.lists(
    st.sampled_from([*"abcxyz   \t\n\r", "\r\n", "word ", "é", "日本", "\n\n"]), max_size=300
).map("".join)
"""Texts with words, runs of whitespace, every line-break style and non-ASCII characters."""


@st.composite
def window_params(draw: st.DrawFn) -> WindowParams:
    unit = draw(st.sampled_from(list(Unit)))
    size = draw(st.integers(min_value=1, max_value=40))
    overlap = draw(st.integers(min_value=0, max_value=size - 1))
    return WindowParams(unit, size, overlap)


def units_of(text: str, unit: Unit) -> list[tuple[int, int]]:
    """An independent oracle of each unit's span: characters, words by regex, lines by splitlines."""
    if unit is Unit.CHARS:
        return [(i, i + 1) for i in range(len(text))]
    if unit is Unit.WORDS:
        return [m.span() for m in re.finditer(r"\S+", text)]
    spans, start = [], 0
    for line in text.splitlines(keepends=True):
        spans.append((start, start + len(line)))
        start += len(line)
    return spans


def expected_windows(text: str, params: WindowParams) -> list[tuple[int, int]]:
    """The grid the brief describes, built the slow way: start at 0, step, stop once the end is reached."""
    spans = units_of(text, params.unit)
    result, first = [], 0
    while first < len(spans):
        last = min(first + params.size, len(spans))
        start, end = spans[first][0], spans[last - 1][1]
        if text[start:end].strip():
            result.append((start, end))
        if last == len(spans):
            break
        first += params.step
    return result


@given(texts, window_params())
def test_windows_follow_the_fixed_grid(text: str, params: WindowParams) -> None:
    windows = cut_windows("f.txt", text, params)
    assert [(w.start, w.end) for w in windows] == expected_windows(text, params)


@given(texts, window_params())
def test_window_invariants(text: str, params: WindowParams) -> None:
    windows = cut_windows("f.txt", text, params)
    lines = LineIndex(text)
    for position, window in enumerate(windows):
        assert window.index == position
        assert window.unit is params.unit
        assert 0 <= window.start < window.end <= len(text)
        assert window.text_in(text) == text[window.start : window.end]
        assert window.text_in(text).strip(), "whitespace-only windows are dropped"
        assert window.line_start == lines.line_of(window.start)
        assert window.line_end == lines.line_of(window.end - 1)
        assert window.line_start <= window.line_end
    for previous, current in pairwise(windows):
        assert previous.start < current.start
        assert previous.end < current.end, "no window lies wholly inside the previous one"


@given(texts, window_params())
def test_every_non_space_character_is_in_some_window(text: str, params: WindowParams) -> None:
    windows = cut_windows("f.txt", text, params)
    covered = set()
    for window in windows:
        covered.update(range(window.start, window.end))
    for offset, char in enumerate(text):
        if not char.isspace():
            assert offset in covered


@given(texts, window_params())
def test_windows_hold_size_units_and_neighbours_share_the_overlap(text: str, params: WindowParams) -> None:
    spans = units_of(text, params.unit)
    first_unit = {start: i for i, (start, _) in enumerate(spans)}
    last_unit = {end: i + 1 for i, (_, end) in enumerate(spans)}
    windows = cut_windows("f.txt", text, params)
    ranges = [(first_unit[w.start], last_unit[w.end]) for w in windows]
    for first, last in ranges[:-1]:
        assert last - first == params.size
    for (first, last), (next_first, _) in pairwise(ranges):
        assert (next_first - first) % params.step == 0
        if next_first - first == params.step:  # neighbours on the grid, nothing dropped between them
            assert last - next_first == params.overlap


def test_the_seed_example_4200_characters() -> None:
    text = "x" * 4200
    windows = cut_windows("f.txt", text, WindowParams())
    assert [w.start for w in windows] == [0, 800, 1600, 2400, 3200]
    assert [w.end for w in windows] == [1000, 1800, 2600, 3400, 4200]


def test_short_text_is_one_window() -> None:
    [window] = cut_windows("f.txt", "tiny file\n", WindowParams())
    assert (window.start, window.end, window.line_start, window.line_end) == (0, 10, 1, 1)


def test_whitespace_only_text_has_no_windows() -> None:
    assert cut_windows("f.txt", " \n\t\n  ", WindowParams(Unit.LINES, 1, 0)) == []


def test_word_windows_keep_the_original_whitespace() -> None:
    text = "alpha  beta\n\tgamma delta epsilon"
    windows = cut_windows("f.txt", text, WindowParams(Unit.WORDS, 3, 1))
    assert [w.text_in(text) for w in windows] == ["alpha  beta\n\tgamma", "gamma delta epsilon"]


def test_line_windows_count_crlf_lines() -> None:
    text = "".join(f"line {i}\r\n" for i in range(1, 11))
    windows = cut_windows("f.txt", text, WindowParams(Unit.LINES, 4, 1))
    assert [(w.line_start, w.line_end) for w in windows] == [(1, 4), (4, 7), (7, 10)]
    assert windows[1].text_in(text).startswith("line 4\r\n")


def test_citation_names_lines_not_offsets() -> None:
    window = Window("src/app.py", Unit.CHARS, 0, 10, 900, 3, 27)
    assert window.citation == "src/app.py:L3-L27"


def test_word_spans_are_maximal_non_space_runs() -> None:
    assert word_spans(" a bc\td ") == [(1, 2), (3, 5), (6, 7)]


@pytest.mark.parametrize(
    ("size", "overlap", "message"),
    [(0, 0, "at least 1"), (-5, 0, "at least 1"), (10, -1, "negative"), (10, 10, "smaller than the size")],
)
def test_bad_parameters_are_clear_errors(size: int, overlap: int, message: str) -> None:
    with pytest.raises(BadInputError, match=message):
        WindowParams(Unit.CHARS, size, overlap)


def test_unknown_unit_is_a_clear_error() -> None:
    with pytest.raises(BadInputError, match="unknown window unit 'tokens'"):
        WindowParams.for_unit("tokens")


def test_defaults_per_unit_and_proportional_overlap() -> None:
    assert WindowParams.for_unit("chars") == WindowParams(Unit.CHARS, 1000, 200)
    assert WindowParams.for_unit("words") == WindowParams(Unit.WORDS, 200, 20)
    assert WindowParams.for_unit("chars", size=500) == WindowParams(Unit.CHARS, 500, 100)
    assert WindowParams.for_unit("chars", size=500, overlap=0) == WindowParams(Unit.CHARS, 500, 0)
    assert WindowParams().describe() == "1000/200 chars"


def test_file_rows_are_each_file_s_contiguous_rows_in_corpus_order() -> None:
    from raglens.windows import WindowColumns

    windows = [
        *cut_windows("a.md", "x" * 2500, WindowParams()),
        *cut_windows("b.md", "y" * 900, WindowParams()),
    ]
    rows = WindowColumns.of(Unit.CHARS, windows).file_rows()
    assert rows == {"a.md": range(0, 3), "b.md": range(3, 4)}
    assert all(windows[row].path == path for path, span in rows.items() for row in span)


files_to_cut = st.lists(st.tuples(st.sampled_from(["a.md", "b/c.py", "d.txt", "e.rst"]), texts), max_size=6)
"""(path, text) pairs, some cut into no window."""


@given(files_to_cut, window_params())
def test_columns_hold_exactly_the_windows_cut_file_by_file(
    files: list[tuple[str, str]], params: WindowParams
) -> None:
    """The oracle: each file cut on its own into window objects, the files' windows in turn."""
    from raglens.windows import WindowColumns

    distinct = [(f"{number}/{path}", text) for number, (path, text) in enumerate(files)]
    expected = [window for path, text in distinct for window in cut_windows(path, text, params)]
    columns = WindowColumns.cut(distinct, params)
    assert len(columns) == len(expected) and list(columns) == expected
    assert [columns[row] for row in range(len(columns))] == expected
    assert [columns[row - len(columns)] for row in range(len(columns))] == expected, "negative rows"
    assert columns[1:-1:2] == expected[1:-1:2]
    rows: dict[str, list[int]] = {}
    for row, window in enumerate(expected):
        rows.setdefault(window.path, []).append(row)
    assert columns.file_rows() == {path: range(found[0], found[-1] + 1) for path, found in rows.items()}
    for path, _ in distinct:
        numbered = [(row, window) for row, window in enumerate(expected) if window.path == path]
        assert columns.numbered_windows_of(path) == numbered
        assert list(columns.rows_of(path)) == [row for row, _ in numbered]
    text_of = dict(distinct)
    assert columns.texts(text_of.__getitem__) == [window.text_in(text_of[window.path]) for window in expected]
    cuts = columns.columns()
    assert cuts.shape == (4, len(expected))
    assert cuts.T.tolist() == [[w.start, w.end, w.line_start, w.line_end] for w in expected]
    assert columns.lengths().tolist() == [window.length for window in expected]
    again = WindowColumns.of(params.unit, expected)
    assert list(again) == expected and again.file_rows() == columns.file_rows()


def test_a_row_outside_the_columns_is_an_index_error_and_a_numpy_row_a_plain_index() -> None:
    import numpy as np

    from raglens.windows import WindowColumns

    columns = WindowColumns.cut([("a.md", "x" * 2500), ("b.md", "y" * 900)], WindowParams())
    for outside in (4, -5):
        with pytest.raises(IndexError):
            columns[outside]
    window = columns[np.int64(3)]
    assert window == Window("b.md", Unit.CHARS, 0, 0, 900, 1, 1) and type(window.index) is int
    assert len(WindowColumns.empty()) == 0 and list(WindowColumns.empty()) == []
    a, b = cut_windows("a.md", "x" * 2500, WindowParams()), cut_windows("b.md", "y", WindowParams())
    with pytest.raises(ValueError, match="one run"):
        WindowColumns.of(Unit.CHARS, [*a[:1], *b, *a[1:]])
    with pytest.raises(ValueError, match="a window of words among windows of chars"):
        WindowColumns.of(Unit.CHARS, cut_windows("a.md", "one two", WindowParams(Unit.WORDS, 2, 0)))
