from __future__ import annotations

import codecs

from hypothesis import given
from hypothesis import strategies as st

from raglens.decoding import decode_bytes


def test_utf8_with_and_without_bom() -> None:
    assert decode_bytes("héllo".encode()) is not None
    decoded = decode_bytes(codecs.BOM_UTF8 + "héllo".encode())
    assert decoded is not None
    assert (decoded.text, decoded.note) == ("héllo", "")


def test_utf16_with_bom_is_text_not_binary() -> None:
    for encoding in ("utf-16-le", "utf-16-be"):
        bom = codecs.BOM_UTF16_LE if encoding.endswith("le") else codecs.BOM_UTF16_BE
        decoded = decode_bytes(bom + "grüße\nwelt".encode(encoding))
        assert decoded is not None
        assert decoded.text == "grüße\nwelt"


def test_utf16_without_bom_is_guessed_and_said() -> None:
    decoded = decode_bytes("plain ascii text in utf-16\n".encode("utf-16-le"))
    assert decoded is not None
    assert decoded.text == "plain ascii text in utf-16\n"
    assert "guessed utf-16-le" in decoded.note


def test_nul_byte_means_binary() -> None:
    assert decode_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR") is None


def test_windows_1252_is_decoded_and_flagged() -> None:
    decoded = decode_bytes("café crème".encode("cp1252"))
    assert decoded is not None
    assert decoded.text == "café crème"
    assert "Windows-1252" in decoded.note


def test_bytes_neither_utf8_nor_cp1252_are_replaced_and_counted() -> None:
    decoded = decode_bytes(b"ok \x81 then \x8d end")
    assert decoded is not None
    assert decoded.text == "ok \ufffd then \ufffd end"
    assert "2 undecodable" in decoded.note


@given(st.binary(max_size=2000))
def test_any_bytes_decode_or_are_called_binary_without_raising(data: bytes) -> None:
    decoded = decode_bytes(data)
    if decoded is not None:
        assert isinstance(decoded.text, str)
