"""A file's text held as a string or as UTF-8, whichever is smaller: read back it is the same text."""

from __future__ import annotations

import sys

from hypothesis import given
from hypothesis import strategies as st

from raglens.corpus import FileTexts, SourceFile
from raglens.held_text import _DecodedTexts, hold, hold_utf8, holds, text_of, utf8_of

# Every code point, lone surrogates too (a decoding with surrogateescape makes them).
any_text = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=()))


@given(any_text)
def test_a_held_text_reads_back_as_itself_and_is_never_larger(text: str) -> None:
    held = hold(text)
    assert text_of(held) == text
    assert sys.getsizeof(held) <= sys.getsizeof(text)
    assert utf8_of(held) == text.encode("utf-8", "surrogatepass")


@given(any_text)
def test_holding_from_utf8_is_holding_the_text(text: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    assert hold_utf8(data) == (hold(text), len(text))
    assert hold_utf8(memoryview(data)) == (hold(text), len(text))


def test_one_wide_character_makes_a_text_smaller_as_utf8() -> None:
    ascii_text = "def drain():\n    return 1\n" * 100
    for wide in ("\u2014", "\U0001f600"):  # an em dash: two bytes a character as a string; an emoji: four
        held = hold(ascii_text + wide)
        assert isinstance(held, bytes)
        assert sys.getsizeof(held) < sys.getsizeof(ascii_text + wide) / 1.9
    assert hold(ascii_text) is ascii_text
    assert isinstance(hold("café " * 100), str)  # Latin-1: one byte a character as a string already
    assert isinstance(hold("\u4e2d\u6587" * 100), str)  # CJK: two bytes as a string, three in UTF-8


@given(any_text, any_text)
def test_holds_is_substring_of_the_text(text: str, needle: str) -> None:
    assert holds(hold(text), needle) == (needle in text)
    assert holds(hold(text + needle + text), needle)


def test_decoded_texts_are_kept_within_the_budget_the_latest_whatever_its_size() -> None:
    first, second, huge = ("\u2014" * 6).encode(), ("\u2013" * 6).encode(), ("\u2012" * 50).encode()
    decoded = _DecodedTexts(budget_bytes=sys.getsizeof("\u2014" * 6) + 10)
    a = decoded.text(first)
    assert decoded.text(first) is a  # kept: read again, not decoded again
    decoded.text(second)  # over the budget with the first: the first is dropped
    assert decoded.text(first) is not a
    assert decoded.text(huge) == "\u2012" * 50
    assert decoded.text(huge) is decoded.text(huge)  # over the budget alone, yet kept as the latest


def test_a_source_file_made_from_utf8_equals_one_made_from_its_text() -> None:
    text = "# Guide \u2014 start a worker \U0001f600\n" * 30
    made = SourceFile("docs/guide.md", text, "utf-8", 999, "", 5)
    recalled = SourceFile.from_utf8("docs/guide.md", text.encode(), "utf-8", 999, "", 5)
    assert made == recalled
    assert made.text == recalled.text == text
    assert made.length == len(text)
    assert isinstance(made.held, bytes)


@given(st.dictionaries(st.sampled_from(["a.py", "b.md", "c/d.txt"]), any_text), any_text)
def test_file_texts_are_the_files_texts_and_holding_finds_those_with_the_needle(
    texts: dict[str, str], needle: str
) -> None:
    def file_texts_of(texts: dict[str, str]) -> FileTexts:
        return FileTexts({path: SourceFile(path, text, "utf-8", 1) for path, text in texts.items()})

    file_texts = file_texts_of(texts)
    assert dict(file_texts) == texts
    assert list(file_texts.holding(needle)) == [(p, t) for p, t in texts.items() if needle in t]
    assert all(path in file_texts and file_texts.length(path) == len(texts[path]) for path in texts)
    assert "elsewhere.py" not in file_texts
    # Compared as held, the same as compared as texts.
    assert file_texts == file_texts_of(dict(texts))
    other = {**texts, "a.py": texts.get("a.py", "") + needle + "\u2014"}
    assert (file_texts == file_texts_of(other)) == (texts == other)
