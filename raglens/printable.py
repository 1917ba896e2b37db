"""Make file content safe to show: control codes become visible, inert characters."""

from __future__ import annotations

import re

_BIDI_CONTROLS = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_UNSAFE = re.compile(f"\r\n?|[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI_CONTROLS}]")
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f\u2028\u2029{_BIDI_CONTROLS}]")


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
    return f"<U+{code:04X}>"


def printable(text: str) -> str:
    """``text`` with every control code a terminal would act on replaced by a visible stand-in.

    Line feeds and tabs stay; CR and CRLF become line feeds; ESC, BEL, backspace, C1 codes and
    bidirectional overrides become symbols, so file content can never drive the terminal.
    """
    return _UNSAFE.sub(_visible, text)


def json_safe(document_text: str) -> str:
    """JSON text with the characters json.dumps leaves raw but terminals act on escaped as \\uXXXX."""
    return _JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", document_text)


_NAME_UNSAFE = re.compile(r"[\n\t]|[\ud800-\udfff]")


def _visible_in_name(match: re.Match[str]) -> str:
    char = match.group()
    if char in "\n\t":
        return chr(0x2400 + ord(char))  # ␊ and ␉: a name is one line, whatever its bytes
    code = ord(char)
    # A byte that is not UTF-8, as the file system handed it over (surrogateescape): show the byte.
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"<U+{code:04X}>"


def printable_name(name: str) -> str:
    """A file name or other one-line label as inert text: ``printable``, plus newlines, tabs and
    undecodable bytes made visible, so a name can neither drive the terminal nor fake a second line."""
    return printable(_NAME_UNSAFE.sub(_visible_in_name, name))
