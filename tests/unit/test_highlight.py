"""Syntax colours for hit excerpts: the text is never changed, only coloured."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from pygments.lexers import get_all_lexers, get_lexer_for_filename
from pygments.util import ClassNotFound

from raglens.printable import printable
from raglens.ui.highlight import _lexer_for_suffix, highlighted, lexer_for

PATHS = ["pkg/module.py", "docs/guide.md", "config.toml", "Makefile", "notes.unknownext", "README"]


@given(st.sampled_from(PATHS), st.text(max_size=300))
def test_colouring_keeps_the_text_exactly(path: str, raw: str) -> None:
    text = printable(raw)
    coloured = highlighted(path, text)
    assert coloured.plain == text
    assert coloured.plain.count("\n") == text.count("\n"), "lines stay where the excerpt put them"


def test_python_keywords_are_coloured_without_a_background() -> None:
    coloured = highlighted("tidepool/queue.py", "def drain(queue):\n    return 1\n")
    keyword_styles = [span.style for span in coloured.spans if coloured.plain[span.start : span.end] == "def"]
    assert keyword_styles and all(getattr(style, "color", None) is not None for style in keyword_styles)
    assert all(getattr(span.style, "bgcolor", None) is None for span in coloured.spans)


def test_unknown_kinds_of_file_stay_plain() -> None:
    assert lexer_for("notes.unknownext") is None
    assert highlighted("notes.unknownext", "def x(): pass").spans == []
    assert lexer_for("a/b/module.py") is lexer_for("other.py"), "one lexer per extension"


def example_name(pattern: str) -> str:
    """A file name that ``pattern`` matches: each ``*`` as ``x``, ``?`` as ``a``, a ``[set]`` as its first."""
    name = re.sub(r"\[!?(.)[^\]]*\]", r"\1", pattern)
    return name.replace("*", "x").replace("?", "a")


PATTERNS = sorted({pattern for _, _, patterns, _ in get_all_lexers(plugins=False) for pattern in patterns})


def test_the_lexer_is_the_one_pygments_picks_for_every_pattern() -> None:
    """The fast lookup agrees with Pygments' own ``get_lexer_for_filename`` (which compiles every pattern)
    on a name for each of its file-name patterns: whole names such as ``CMakeLists.txt`` outrank ``*.txt``."""
    names = [example_name(pattern) for pattern in PATTERNS] + [path.rpartition("/")[2] for path in PATHS]
    disagreements = []
    for name in names:
        try:
            expected: type | None = type(get_lexer_for_filename(name))
        except ClassNotFound:
            expected = None
        found = _lexer_for_suffix.__wrapped__(name)
        if (type(found) if found is not None else None) is not expected:
            disagreements.append(name)
    assert not disagreements


def test_a_colouring_kept_for_later_is_not_changed_by_what_a_caller_marks_on_its_copy() -> None:
    first = highlighted("queue.py", "def drain(jobs):\n    return jobs\n")
    plain_spans = list(first.spans)
    first.stylize("reverse", 0, 3)  # as hit_excerpt marks the question's words
    again = highlighted("queue.py", "def drain(jobs):\n    return jobs\n")
    assert again is not first
    assert list(again.spans) == plain_spans
