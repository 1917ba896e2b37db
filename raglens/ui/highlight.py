"""Syntax colours for short excerpts of code, chosen by file name, with no background of their own.

Importing Pygments and compiling a lexer's rules takes ~0.1 s, so this runs in workers (the corpus
worker warms it, the ranking worker uses it), never on the UI thread.
"""

from __future__ import annotations

import fnmatch
import re
import threading
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text

if TYPE_CHECKING:
    from pygments.lexer import Lexer
    from pygments.token import _TokenType
    from rich.syntax import PygmentsSyntaxTheme

THEME = "monokai"

_lock = threading.Lock()


_GLOB = re.compile(r"[*?\[\]]")


@cache
def _file_name_patterns() -> tuple[tuple[str, str], ...]:
    """``(pattern, lexer name)`` for each file-name pattern of Pygments' built-in lexers, none imported."""
    from pygments.lexers import get_all_lexers

    try:
        lexers = list(get_all_lexers(plugins=False))  # plugins: 30 ms of reading package metadata
    except TypeError:  # an older Pygments, which always lists them
        lexers = list(get_all_lexers())
    return tuple((pattern, name) for name, _, patterns, _ in lexers for pattern in patterns)


def _name_matches(name: str, pattern: str) -> bool:
    """Whether ``name`` matches the glob ``pattern``, case-sensitively, as Pygments matches them.

    Most patterns are ``*.ext``: a suffix test. Pygments itself compiles every pattern as a regular
    expression on the first lookup: 0.13 s, which the first ranking of a session waited for.
    """
    if pattern.startswith("*.") and not _GLOB.search(pattern, 2):
        return name.endswith(pattern[1:])
    return name.endswith(_GLOB.split(pattern)[-1]) and fnmatch.fnmatchcase(name, pattern)


@cache
def _lexer_for_suffix(name: str) -> Lexer | None:
    """The lexer Pygments' ``get_lexer_for_filename`` picks for ``name`` (built-in lexers only)."""
    from pygments.lexers import find_lexer_class

    candidates = []
    for pattern, lexer_name in _file_name_patterns():
        if _name_matches(name, pattern):
            found = find_lexer_class(lexer_name)
            if found is not None:
                candidates.append((found, pattern))
    if not candidates:
        return None
    # Pygments' own rating: the lexer's priority, half a point more for a whole-name pattern.
    chosen, _ = max(
        candidates,
        key=lambda entry: (entry[0].priority + (0.5 if "*" not in entry[1] else 0), entry[0].__name__),
    )
    # Neither strip nor add line breaks: the colours must line up with the excerpt's own lines.
    return chosen(stripnl=False, ensurenl=False)


def lexer_for(path: str) -> Lexer | None:
    """The Pygments lexer for ``path``'s kind of file, or None when it is plain text or unknown."""
    name = path.rpartition("/")[2]
    # Cached per extension (or per whole name, for Makefile and the like), not per file.
    key = f"x.{name.rpartition('.')[2]}" if "." in name.lstrip(".") else name
    with _lock:  # one thread builds Pygments' table; the others wait instead of building it too
        return _lexer_for_suffix(key)


@cache
def _theme() -> PygmentsSyntaxTheme:
    from rich.syntax import PygmentsSyntaxTheme

    return PygmentsSyntaxTheme(THEME)


@cache
def _token_style(token_type: _TokenType) -> Style:
    """The theme's colour and weight for ``token_type``, without its background."""
    style = _theme().get_style_for_token(token_type)
    return Style(color=style.color, bold=style.bold, italic=style.italic)


def highlighted(path: str, text: str) -> Text:
    """``text`` (already made printable) coloured as the code of ``path``, or plain if it is not code.

    A copy of the colouring kept for the last COLOURINGS_KEPT texts: a question is ranked again as
    vectors arrive and as it is typed, mostly to the same hits, and Pygments took 4 ms a hit (20 of a
    ranking's 35 ms at 100k windows). Callers mark the question's words on the copy.
    """
    return _coloured(path, text).copy()


COLOURINGS_KEPT = 256


@lru_cache(maxsize=COLOURINGS_KEPT)
def _coloured(path: str, text: str) -> Text:
    lexer = lexer_for(path)
    if lexer is None:
        return Text(text)
    result = Text()
    for token_type, value in lexer.get_tokens(text):
        result.append(value, style=_token_style(token_type))
    return result


def warm_up(paths: list[str]) -> None:
    """Import Pygments and find the lexers of ``paths`` now, so the first ranking does not wait."""
    from pygments.token import Token

    for path in paths:
        lexer_for(path)
    _token_style(Token)
