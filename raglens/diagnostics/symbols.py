"""Where identifiers are defined in a file: Python through ``ast``, other languages by a clear fallback.

The fallback reads lines such as ``function name(``, ``fn name``, ``class Name`` and takes the
definition to run until the next line indented no deeper than it (which, for braces, is the
closing brace): good enough to say which window holds a definition, not a parser.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from raglens.lines import LineIndex

PYTHON_SUFFIXES = (".py", ".pyi")

_MODIFIERS = frozenset(
    [
        "export",
        "pub",
        "public",
        "private",
        "protected",
        "static",
        "async",
        "default",
        "abstract",
        "final",
        "inline",
        "extern",
        "unsafe",
        "const",
    ]
)
_FALLBACK_DEFINITION = re.compile(
    r"^(?P<indent>[ \t]*)(?:(?:export|pub(?:\([^)]*\))?|public|private|protected|static|async|default"
    r"|abstract|final|inline|extern|unsafe|const)\s+)*"
    r"(?:function\*?|fn|func|def|class|struct|enum|trait|interface|impl|module|type|sub|proc)\s+"
    r"(?:\([^)]*\)\s*)?(?P<name>[A-Za-z_$][\w$]*)",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Definition:
    """One defined identifier: a function, class or method, and the characters its definition spans.

    A golden answer given as a line range is one too, of kind ``lines``: every answer span is.
    """

    path: str
    name: str
    """The dotted name within its file, e.g. ``Queue.drain`` for a method (``L3-L9`` for lines)."""
    kind: str
    """``function``, ``class``, ``lines`` or, from the fallback, the keyword that introduced it."""
    start: int
    end: int
    """Offsets of the definition's first and one past its last character (decorators included)."""
    line_start: int
    line_end: int
    docstring: str | None
    found_by: str
    """``ast``, ``fallback`` or ``lines``."""

    @property
    def short_name(self) -> str:
        """The last part of the dotted name."""
        return self.name.rpartition(".")[2]

    @property
    def location(self) -> str:
        return f"{self.path}:L{self.line_start}-L{self.line_end}"

    def overlaps(self, start: int, end: int) -> bool:
        """Whether the characters [start, end) share any with the definition."""
        return start < self.end and self.start < end


def find_definitions(path: str, text: str) -> list[Definition]:
    """Every definition in one file, in order of position; none for a file that cannot be parsed."""
    lines = LineIndex(text)
    if path.endswith(PYTHON_SUFFIXES):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return _fallback_definitions(path, text, lines)
        found: list[Definition] = []
        _walk_python(path, tree.body, "", lines, text, found)
        return sorted(found, key=lambda d: d.start)
    return _fallback_definitions(path, text, lines)


def _walk_python(
    path: str, body: list[ast.stmt], prefix: str, lines: LineIndex, text: str, found: list[Definition]
) -> None:
    for node in body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        first_line = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        last_line = node.end_lineno or node.lineno
        start = lines.line_start(first_line)
        end = lines.line_span(last_line)[1] if last_line <= lines.line_count else len(text)
        name = f"{prefix}{node.name}"
        kind = "class" if isinstance(node, ast.ClassDef) else "function"
        found.append(
            Definition(path, name, kind, start, end, first_line, last_line, ast.get_docstring(node), "ast")
        )
        _walk_python(path, node.body, f"{name}.", lines, text, found)


def _indent_width(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _fallback_definitions(path: str, text: str, lines: LineIndex) -> list[Definition]:
    found: list[Definition] = []
    open_scopes: list[tuple[int, str]] = []
    """(indent, dotted name) of the definitions enclosing the current line, for dotted names."""
    for match in _FALLBACK_DEFINITION.finditer(text):
        indent = len(match.group("indent").expandtabs(4))
        first_line = lines.line_of(match.start("name"))
        last_line = first_line
        for line in range(first_line + 1, lines.line_count + 1):
            start, end = lines.line_span(line)
            content = text[start:end].rstrip("\r\n")
            if not content.strip():
                continue
            if len(content[: _indent_width(content)].expandtabs(4)) <= indent:
                if content.strip()[:1] in "})]" or content.strip().startswith("end"):
                    last_line = line  # the closing brace or `end` belongs to the definition
                break
            last_line = line
        while open_scopes and open_scopes[-1][0] >= indent:
            open_scopes.pop()
        name = match.group("name")
        dotted = f"{open_scopes[-1][1]}.{name}" if open_scopes else name
        open_scopes.append((indent, dotted))
        words = text[match.start() : match.start("name")].split()
        kind = next((w.rstrip("*") for w in words if w.isalpha() and w not in _MODIFIERS), "definition")
        start = lines.line_start(first_line)
        end = lines.line_span(last_line)[1]
        found.append(Definition(path, dotted, kind, start, end, first_line, last_line, None, "fallback"))
    return found
