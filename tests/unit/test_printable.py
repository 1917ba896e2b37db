from __future__ import annotations

import json
import os
import re

from hypothesis import given
from hypothesis import strategies as st

from raglens.printable import json_safe, printable

TERMINAL_ACTIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_escape_sequences_become_visible_symbols() -> None:
    hostile = "title\x1b]0;pwned\x07 clear\x1b[2J bell\x07 back\x08space osc52\x1b]52;c;ZXZpbA==\x07"
    shown = printable(hostile)
    assert "\x1b" not in shown
    assert "\x07" not in shown
    assert "␛]0;pwned␇" in shown
    assert "␛[2J" in shown


def test_line_breaks_stay_and_cr_never_returns_the_cursor() -> None:
    assert printable("a\r\nb\rc\nd\te") == "a\nb\nc\nd\te"


def test_c1_controls_and_bidi_overrides_are_shown_inert() -> None:
    assert printable("x\x9b2Jy") == "x\\x9b2Jy"
    assert printable("abc\u202edef") == "abc<U+202E>def"


@given(st.text())
def test_nothing_a_terminal_acts_on_survives(text: str) -> None:
    assert not TERMINAL_ACTIVE.search(printable(text))


@given(st.text())
def test_json_safe_keeps_the_exact_text_and_escapes_raw_controls(text: str) -> None:
    encoded = json_safe(json.dumps({"text": text}, ensure_ascii=False))
    assert not TERMINAL_ACTIVE.search(encoded)
    assert json.loads(encoded)["text"] == text


def test_a_name_stays_on_one_line_and_shows_bytes_that_are_not_utf8() -> None:
    from raglens.printable import printable_name

    assert printable_name("two\nlines\t.md") == "two␊lines␉.md"
    assert printable_name("caf\udce9.md") == "caf\\xe9.md"
    assert printable_name("\x1b]2;TITLE\x07x") == "␛]2;TITLE␇x"
    assert printable_name("[bold]plain[/bold].md") == "[bold]plain[/bold].md", "markup is escaped where drawn"


@given(st.text())
def test_whatever_a_name_holds_its_printable_form_encodes_as_strict_utf8(text: str) -> None:
    from raglens.printable import printable_name

    printable(text).encode("utf-8")  # lone surrogates would raise here
    assert "\n" not in printable_name(text)
    printable_name(text).encode("utf-8")


@given(st.binary(min_size=1, max_size=40))
def test_json_of_any_name_is_valid_utf8_and_gives_the_raw_bytes_back(raw: bytes) -> None:
    name = raw.decode("utf-8", "surrogateescape")
    encoded = json_safe(json.dumps({"path": name}, ensure_ascii=False)).encode("utf-8")
    assert os.fsencode(json.loads(encoded.decode("utf-8"))["path"]) == raw
