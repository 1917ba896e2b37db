"""Soft wrap: rows are exact slices of a line that fit the width, and the row map finds each piece."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len, get_character_cell_size
from rich.text import Text

from raglens.ui.soft_wrap import WrappedRows, _wrap_starts_by_cells, shown_lines, wrap_starts
from raglens.ui.widgets.file_lines import line_content, wrapped_line_rows
from raglens.window_layout import FileLayout
from raglens.windows import Unit, WindowParams, cut_windows

ascii_lines = st.text(alphabet=st.sampled_from([*"ab cd  e", "x"]), max_size=300)
any_lines = st.lists(st.sampled_from([*"ab c ", "é", "€", "漢", "字", "\u0301"]), max_size=200).map("".join)
widths = st.integers(min_value=1, max_value=90)


def pieces(shown: str, width: int) -> list[str]:
    starts = wrap_starts(shown, width)
    return [shown[a:b] for a, b in zip(starts, (*starts[1:], len(shown)), strict=True)]


@given(any_lines, widths)
def test_rows_are_exact_nonempty_slices_that_fit(shown: str, width: int) -> None:
    rows = pieces(shown, width)
    assert "".join(rows) == shown
    assert all(rows) or rows == [""]
    for row in rows:
        visible = [char for char in row if get_character_cell_size(char) > 0]
        assert cell_len(row) <= width or len(visible) == 1, (row, width)


@given(ascii_lines, widths)
def test_the_ascii_fast_path_agrees_with_counting_cells(shown: str, width: int) -> None:
    assert wrap_starts(shown, width) == _wrap_starts_by_cells(shown, width)


@given(ascii_lines, st.integers(min_value=4, max_value=90))
def test_a_row_breaks_after_a_space_in_its_second_half_when_there_is_one(shown: str, width: int) -> None:
    rows = pieces(shown, width)
    for row in rows[:-1]:
        if " " in row[width // 2 :] or " " in row[width // 2 : width]:
            assert row.endswith(" "), (row, width)


def test_prose_breaks_between_words_and_code_without_spaces_at_the_width() -> None:
    assert pieces("the quick brown fox jumps", 10) == ["the quick ", "brown fox ", "jumps"]
    assert pieces("a" * 25, 10) == ["a" * 10, "a" * 10, "a" * 5]


@given(st.lists(any_lines, min_size=1, max_size=30), widths)
def test_every_row_locates_its_line_and_piece(lines: list[str], width: int) -> None:
    rows = WrappedRows(lines, len(lines), width)
    seen = [rows.locate(row) for row in range(rows.row_count)]
    expected = [
        (number, piece)
        for number, line in enumerate(lines, 1)
        for piece in range(len(wrap_starts(line, width)))
    ]
    assert seen == expected
    for number in range(1, len(lines) + 1):
        assert rows.locate(rows.first_row(number)) == (number, 0)


def test_shown_lines_expand_tabs_and_make_controls_visible() -> None:
    assert shown_lines("a\tb\r\n\x1b[2J") == ["a       b", "␛[2J"]


def styles_by_character(text: Text) -> list[tuple[str, tuple[str, ...]]]:
    """Each character of ``text`` with the styles of the spans over it, in order."""
    return [
        (char, tuple(str(span.style) for span in text.spans if span.start <= offset < span.end))
        for offset, char in enumerate(text.plain)
    ]


file_texts = st.lists(st.sampled_from([*"ab  cd\n\t\r", "\r\n", "é", "漢", "\x1b"]), max_size=400).map(
    "".join
)


@settings(max_examples=150, deadline=None)
@given(file_texts, st.integers(min_value=5, max_value=60), st.integers(min_value=1, max_value=50))
def test_wrapped_rows_keep_every_mark_on_its_character(text: str, size: int, width: int) -> None:
    windows = cut_windows("f.txt", text, WindowParams(Unit.CHARS, size, size // 3))
    current = len(windows) // 2 if windows else None
    layout = FileLayout(text, windows, current, chars_read=size // 2, cut_lines=frozenset({2}))
    drawn = shown_lines(text)
    rows = WrappedRows(drawn, layout.line_count, width)
    gutter = 3
    for number in range(1, layout.line_count + 1):
        content = line_content(layout, number)
        assert content.plain == drawn[number - 1], "the wrap measures what is drawn"
        pieces = wrapped_line_rows(layout, number, rows.starts[number - 1], gutter)
        assert pieces[0].plain[:gutter].strip() == str(number)
        assert all(not piece.plain[:gutter].strip() for piece in pieces[1:]), "one number per line"
        unwrapped = styles_by_character(content)
        rejoined = [pair for piece in pieces for pair in styles_by_character(piece)[gutter + 3 :]]
        assert rejoined == unwrapped
        assert all(piece.plain[gutter + 1] == ("┆" if number == 2 else "│") for piece in pieces)
