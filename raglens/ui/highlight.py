"""Syntax colours for short excerpts of code, chosen by file name, with no background of their own.

Importing Pygments and building its file-name table takes ~0.3 s, so this runs in workers (the
corpus worker warms it, the ranking worker uses it), never on the UI thread.
"""

from __future__ import annotations

import threading
from functools import cache
from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text

if TYPE_CHECKING:
    from pygments.lexer import Lexer
    from pygments.token import _TokenType
    from rich.syntax import PygmentsSyntaxTheme

THEME = "monokai"

_lock = threading.Lock()


@cache
def _lexer_for_suffix(name: str) -> Lexer | None:
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        # Neither strip nor add line breaks: the colours must line up with the excerpt's own lines.
        return get_lexer_for_filename(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


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
    """``text`` (already made printable) coloured as the code of ``path``, or plain if it is not code."""
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
