"""Syntax colours for hit excerpts: the text is never changed, only coloured."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from raglens.printable import printable
from raglens.ui.highlight import highlighted, lexer_for

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
