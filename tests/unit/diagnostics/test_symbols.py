from __future__ import annotations

from raglens.diagnostics.symbols import find_definitions

PYTHON = '''"""A module."""

import functools


@functools.cache
def top_level(x):
    """Return x."""
    return x


class Outer:
    """A class."""

    def method(self):
        return 1

    class Inner:
        async def deep(self):
            pass
'''


def test_python_definitions_are_dotted_and_span_their_decorators() -> None:
    found = {d.name: d for d in find_definitions("m.py", PYTHON)}
    assert set(found) == {"top_level", "Outer", "Outer.method", "Outer.Inner", "Outer.Inner.deep"}
    top = found["top_level"]
    assert PYTHON[top.start : top.end].startswith("@functools.cache\ndef top_level")
    assert PYTHON[top.start : top.end].endswith("return x\n")
    assert (top.line_start, top.line_end) == (6, 9)
    assert top.docstring == "Return x."
    assert found["Outer"].kind == "class"
    assert found["Outer.Inner.deep"].found_by == "ast"
    assert found["Outer.method"].short_name == "method"


def test_broken_python_falls_back_to_the_line_reader() -> None:
    found = find_definitions("broken.py", "def ok(x):\n    return x\n\ndef broken(:\n")
    assert [d.name for d in found] == ["ok", "broken"]
    assert found[0].found_by == "fallback"


def test_fallback_reads_common_languages() -> None:
    source = (
        "export async function fetchRows(db) {\n  return db.all();\n}\n\n"
        "class Cart {\n  total() {}\n  static function helper() {\n    return 1;\n  }\n}\n"
        "pub fn parse_line(s: &str) -> u32 {\n    0\n}\n"
        "func (s *Server) ServeHTTP(w http.ResponseWriter) {\n}\n"
    )
    found = {d.name: d for d in find_definitions("x.ts", source)}
    assert {"fetchRows", "Cart", "Cart.helper", "parse_line", "ServeHTTP"} <= set(found)
    assert found["fetchRows"].kind == "function"
    assert (found["fetchRows"].line_start, found["fetchRows"].line_end) == (1, 3)
    assert (found["Cart"].line_start, found["Cart"].line_end) == (5, 10)
    assert found["parse_line"].kind == "fn"
    assert all(d.found_by == "fallback" for d in found.values())


def test_overlap_is_half_open() -> None:
    definition = find_definitions("m.py", "def f():\n    pass\n")[0]
    assert definition.overlaps(0, 1)
    assert not definition.overlaps(definition.end, definition.end + 5)
