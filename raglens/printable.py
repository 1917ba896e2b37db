"""Make file content safe to show: control codes become visible, inert characters."""

from __future__ import annotations

import re

_BIDI_CONTROLS = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_SURROGATES = "\ud800-\udfff"
"""Lone surrogates: bytes of a file name that are not UTF-8, as the file system handed them over."""
_UNSAFE = re.compile(f"\r\n?|[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI_CONTROLS}{_SURROGATES}]")
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f\u2028\u2029{_BIDI_CONTROLS}{_SURROGATES}]")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if char.startswith("\r"):
        # CRLF and a lone CR both end a line, as raglens counts lines; a CR must never move the cursor.
        return "\n"
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode "control pictures": ESC shows as ␛
    if code == 0x7F:
        return "\u2421"
    if code <= 0x9F:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"  # an undecodable byte (surrogateescape): show the byte
    return f"<U+{code:04X}>"


def printable(text: str) -> str:
    """``text`` with every control code a terminal would act on replaced by a visible stand-in.

    Line feeds and tabs stay; CR and CRLF become line feeds; ESC, BEL, backspace, C1 codes and
    bidirectional overrides become symbols, so file content can never drive the terminal; bytes of
    a name that are not UTF-8 show as ``\\xNN``, so a strict UTF-8 terminal can always print it.
    """
    return _UNSAFE.sub(_visible, text)


def json_safe(document_text: str) -> str:
    """JSON text with the characters json.dumps leaves raw but terminals act on escaped as \\uXXXX.

    A name's undecodable bytes become ``\\udcNN`` escapes: the text stays valid UTF-8, and
    ``os.fsencode(json.loads(text)[...])`` gives the name's bytes back.
    """
    return _JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", document_text)


_LINE_BREAKS = re.compile("[\n\t\r]")


def printable_name(name: str) -> str:
    """A file name or other one-line label as inert text: ``printable``, plus newlines, CRs and tabs
    made visible (␊ ␍ ␉), so a name can neither drive the terminal nor fake a second line."""
    return printable(_LINE_BREAKS.sub(lambda match: chr(0x2400 + ord(match.group())), name))


SHOWN_CHARS = 40
"""The most characters of a user's string (a question, a mode) an error message repeats."""
SHOWN_PATH_CHARS = 200
"""The most characters of a path or a golden ref an error message repeats: more than most real ones."""


def shortened(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` cut to its first ``limit`` characters with an ellipsis, so an error message never
    repeats a runaway string (a 51 MB question) whole."""
    return text if len(text) <= limit else text[:limit] + "…"


def quoted(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` in quotes as ``repr`` writes it, shortened to ``limit`` characters."""
    return repr(shortened(text, limit))
