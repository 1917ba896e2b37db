from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raglens.lines import LineIndex

line_texts = st.lists(st.sampled_from([*"ab \t\n\r", "\r\n", "é", "€"]), max_size=200).map("".join)
"""Texts mixing LF, CR and CRLF line breaks with a few other characters."""


def oracle_line_of(text: str, offset: int) -> int:
    """The 1-based line of ``offset``, from Python's own universal-newline reader."""
    consumed = 0
    for number, line in enumerate(io.StringIO(text, newline="").readlines(), start=1):
        consumed += len(line)
        if offset < consumed:
            return number
    raise AssertionError(f"offset {offset} is past the text")


@given(line_texts)
def test_every_offset_maps_to_the_line_pythons_reader_puts_it_on(text: str) -> None:
    index = LineIndex(text)
    for offset in range(len(text)):
        assert index.line_of(offset) == oracle_line_of(text, offset)


lf_texts = st.lists(st.sampled_from([*"ab \t\n", "é", "€", "\n\n"]), max_size=200).map("".join)
"""Texts with LF breaks only, which LineIndex indexes without a regex."""


@given(lf_texts)
def test_a_text_of_lf_breaks_maps_every_offset_as_the_reader_does(text: str) -> None:
    index = LineIndex(text)
    for offset in range(len(text)):
        assert index.line_of(offset) == oracle_line_of(text, offset)
    assert [text[start:end] for start, end in index.line_spans()] == text.splitlines(keepends=True)
    assert index.line_count == len(text.splitlines())


@given(line_texts)
def test_line_spans_tile_the_text_like_splitlines(text: str) -> None:
    spans = LineIndex(text).line_spans()
    assert [text[start:end] for start, end in spans] == text.splitlines(keepends=True)
    assert LineIndex(text).line_count == len(text.splitlines())


@given(line_texts)
def test_one_line_span_is_that_line_of_all_spans(text: str) -> None:
    index = LineIndex(text)
    assert [index.line_span(n) for n in range(1, index.line_count + 1)] == index.line_spans()
    with pytest.raises(IndexError):
        index.line_span(index.line_count + 1)
    with pytest.raises(IndexError):
        index.line_span(0)


def test_crlf_counts_one_line_break() -> None:
    text = "one\r\ntwo\r\nthree"
    index = LineIndex(text)
    assert index.line_of(text.index("two")) == 2
    assert index.line_of(text.index("\n")) == 1  # the LF of a CRLF belongs to the line it ends
    assert index.line_of(text.index("three")) == 3


def test_a_lone_cr_ends_a_line() -> None:
    index = LineIndex("old\rmac\rfile")
    assert index.line_of(4) == 2
    assert index.line_of(8) == 3


def test_offset_outside_the_text_is_an_error() -> None:
    with pytest.raises(IndexError):
        LineIndex("abc").line_of(4)
