"""Finding an identifier's whole-token occurrences: the same as a regex over each file and an index of
its lines (the oracle), on texts mixing the identifier, word characters and every kind of line break."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from raglens.corpus import FileTexts, SourceFile
from raglens.diagnostics.lexical import Occurrence, find_occurrences
from raglens.lines import LineIndex


def oracle(texts: dict[str, str], identifier: str) -> list[Occurrence]:
    pattern = re.compile(rf"(?<![\w$]){re.escape(identifier)}(?![\w$])")
    found = []
    for path, text in texts.items():
        lines = LineIndex(text)
        found.extend(Occurrence(path, lines.line_of(m.start()), m.start()) for m in pattern.finditer(text))
    return found


pieces = st.sampled_from(
    ["ab", "a-a", "x", "_", "$", " ", ".", "\n", "\r", "\r\n", "é", "a", "\u2014", "\U0001f600"]
)


@given(
    st.sampled_from(["ab", "a-a", "a", "ab_ab"]),
    st.dictionaries(st.sampled_from(["p.py", "q/r.md", "s"]), st.lists(pieces, max_size=40).map("".join)),
)
def test_occurrences_are_those_of_a_regex_with_their_lines(identifier: str, texts: dict[str, str]) -> None:
    assert find_occurrences(texts, identifier) == oracle(texts, identifier)
    # A corpus's texts, some held as UTF-8 (the wide ones), are looked through only where they hold it.
    held = FileTexts({path: SourceFile(path, text, "utf-8", 1) for path, text in texts.items()})
    assert find_occurrences(held, identifier) == oracle(texts, identifier)


def test_a_crlf_text_counts_each_break_once() -> None:
    texts = {"f.py": "x\r\n\r\ny = ab\rab\n ab"}
    assert [(o.line, o.offset) for o in find_occurrences(texts, "ab")] == [(3, 9), (4, 12), (5, 16)]
