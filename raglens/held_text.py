"""A file's text held in whichever form takes less memory: the string, or its UTF-8.

Python stores a string at the width of its widest character: one em dash makes a whole file two bytes
a character, one emoji four. At 100k windows of a real repository's copies, 9 files in each copy were
such, and the corpus's text took 96 MiB as strings against 74 MiB as UTF-8. A text that is smaller as
UTF-8 is held so and decoded when read; the last ones read are kept decoded, within a budget, because
readers such as the coverage count ask for the same file's text once per window.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict

HeldText = str | bytes
"""A text as held: the string itself, or its UTF-8 (``surrogatepass``) where that is smaller."""

_BYTES_OVERHEAD = sys.getsizeof(b"")
DECODED_BUDGET_BYTES = 4 << 20
"""Memory of the decoded texts kept for the next reader (the latest one is kept whatever its size)."""


def _smaller_as_utf8(text: str, utf8_bytes: int) -> bool:
    """Whether ``text``, whose UTF-8 takes ``utf8_bytes``, takes less memory held as that UTF-8; never
    an ASCII text (one byte a character either way)."""
    return not text.isascii() and utf8_bytes + _BYTES_OVERHEAD < sys.getsizeof(text)


def hold(text: str) -> HeldText:
    """``text`` in its smaller form."""
    if text.isascii():
        return text  # (not encoded to tell)
    encoded = text.encode("utf-8", "surrogatepass")
    return encoded if _smaller_as_utf8(text, len(encoded)) else text


def hold_utf8(data: bytes | memoryview) -> tuple[HeldText, int]:
    """The held form of the text whose UTF-8 (``surrogatepass``) is ``data``, without encoding it
    again, and the text's length in characters."""
    text = str(data, "utf-8", "surrogatepass")
    return (bytes(data) if _smaller_as_utf8(text, len(data)) else text), len(text)


def utf8_of(held: HeldText) -> bytes:
    """The text's UTF-8 (``surrogatepass``)."""
    return held if isinstance(held, bytes) else held.encode("utf-8", "surrogatepass")


def holds(held: HeldText, needle: str) -> bool:
    """Whether the text contains ``needle``, asked of its UTF-8 where it is held so (no decoding):
    a character sequence occurs in a text exactly where its UTF-8 occurs in the text's UTF-8."""
    if isinstance(held, str):
        return needle in held
    return needle.encode("utf-8", "surrogatepass") in held


class _DecodedTexts:
    """The texts decoded last, by their held UTF-8, within DECODED_BUDGET_BYTES; safe across threads."""

    def __init__(self, budget_bytes: int) -> None:
        self._budget = budget_bytes
        self._texts: OrderedDict[bytes, str] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def text(self, data: bytes) -> str:
        """The text whose held UTF-8 is ``data``, decoded now or kept from before."""
        with self._lock:
            text = self._texts.get(data)
            if text is not None:
                self._texts.move_to_end(data)
                return text
        text = str(data, "utf-8", "surrogatepass")
        with self._lock:
            if data not in self._texts:
                self._texts[data] = text
                self._bytes += sys.getsizeof(text)
            while self._bytes > self._budget and len(self._texts) > 1:
                _, dropped = self._texts.popitem(last=False)
                self._bytes -= sys.getsizeof(dropped)
        return text


DECODED = _DecodedTexts(DECODED_BUDGET_BYTES)


def text_of(held: HeldText) -> str:
    """The text itself."""
    return held if isinstance(held, str) else DECODED.text(held)
