"""The query's words in a preview: which stems are marked and where they start a word."""

from __future__ import annotations

import re
from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from raglens.query_words import STOPWORDS, query_stems, word_spans


def test_stems_drop_stopwords_short_words_and_one_ending() -> None:
    assert query_stems("How are failed jobs retried with backoff?") == (
        "backoff",
        "retri",
        "retry",
        "fail",
        "job",
    )
    assert query_stems("drain_pending_jobs") == ("drain", "pend", "job")
    assert query_stems("is it in?") == ()


def test_a_stem_marks_words_it_starts_including_inside_identifiers() -> None:
    text = "Jobs retry: retrying a failed job; retried, return shell_completion, nonjob"
    stems = query_stems("failed jobs retried completion")
    marked = [text[start:end] for start, end in word_spans(text, stems)]
    assert marked == ["Jobs", "retry", "retrying", "failed", "job", "retried", "completion"]


words = st.text(alphabet="abcXY_ é1", max_size=12)


@given(st.lists(words, max_size=6).map(" ".join), st.lists(words, max_size=40).map(" \n".join))
def test_spans_are_sorted_disjoint_and_each_starts_a_word_with_a_stem(query: str, text: str) -> None:
    stems = query_stems(query)
    spans = word_spans(text, stems)
    assert spans == sorted(spans)
    assert all(end <= next_start for (_, end), (next_start, _) in pairwise(spans))
    for start, end in spans:
        word = text[start:end]
        assert any(word.casefold().startswith(stem) for stem in stems)
        assert start == 0 or not text[start - 1].isalnum()
        assert re.fullmatch(r"[^\W_]+", word)
    for stem in stems:  # the oracle: every place a stem starts a word is inside a span
        for match in re.finditer(re.escape(stem), text, re.IGNORECASE):
            if match.start() == 0 or not text[match.start() - 1].isalnum():
                assert any(start <= match.start() < end for start, end in spans), (stem, text)
    assert not set(stems) & STOPWORDS
