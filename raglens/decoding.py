"""Turn a file's bytes into text, or decide that it is binary."""

from __future__ import annotations

import codecs
from dataclasses import dataclass

SNIFF_BYTES = 8192
"""How much of a file is inspected for NUL bytes and UTF-16 patterns, as git does."""

_BOMS: tuple[tuple[bytes, str], ...] = (
    # UTF-32 first: its little-endian BOM begins with the UTF-16 one.
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(frozen=True)
class DecodedText:
    """A file's text and how it was obtained from its bytes."""

    text: str
    encoding: str
    note: str = ""
    """Empty when the bytes decoded cleanly; otherwise what was lost or guessed."""


def _sniff_bomless_utf16(sample: bytes) -> str | None:
    """``utf-16-le`` or ``utf-16-be`` when NULs sit on one parity of the sample, as in ASCII-heavy UTF-16."""
    if len(sample) < 4:
        return None
    even, odd = sample[0::2], sample[1::2]
    even_nul = even.count(0) / len(even)
    odd_nul = odd.count(0) / len(odd)
    if odd_nul > 0.3 and even_nul < 0.02:
        return "utf-16-le"
    if even_nul > 0.3 and odd_nul < 0.02:
        return "utf-16-be"
    return None


def _decode_lossy(data: bytes, encoding: str, why: str) -> DecodedText:
    """Decode with replacement characters and say how many were needed."""
    text = data.decode(encoding, errors="replace")
    replaced = text.count("\ufffd")
    note = f"{why}; {replaced} undecodable sequence(s) shown as U+FFFD" if replaced else why
    return DecodedText(text, encoding, note)


def decode_bytes(data: bytes) -> DecodedText | None:
    """The text of ``data``, or None when it looks binary (a NUL byte early on, and no UTF-16/32 sign)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            body = data[len(bom) :]
            try:
                return DecodedText(body.decode(encoding), encoding)
            except UnicodeDecodeError:
                return _decode_lossy(body, encoding, f"invalid {encoding} after its byte-order mark")
    sample = data[:SNIFF_BYTES]
    utf16 = _sniff_bomless_utf16(sample) if b"\x00" in sample else None
    if utf16 is not None:
        try:
            return DecodedText(data.decode(utf16), utf16, f"no byte-order mark; guessed {utf16}")
        except UnicodeDecodeError:
            return None
    if b"\x00" in sample:
        return None
    try:
        return DecodedText(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError as error:
        first_bad = error.start
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        return _decode_lossy(data, "utf-8", f"invalid UTF-8 from byte {first_bad}")
    return DecodedText(text, "cp1252", f"invalid UTF-8 from byte {first_bad}; decoded as Windows-1252")
