from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from raglens.printable import printable
from raglens.window_layout import Band, lay_out
from raglens.windows import Unit, WindowParams, cut_windows

texts = st.lists(st.sampled_from([*"ab c\t\n\r", "\r\n", "\x1b", "  "]), min_size=1, max_size=200).map(
    "".join
)


def brute_force_band(offset: int, windows, current, unread_from) -> Band:  # type: ignore[no-untyped-def]
    covering = [w for w in windows if w.start <= offset < w.end]
    if not covering:
        return Band.OUTSIDE
    if current is not None and any(w.index == current for w in covering):
        if offset >= unread_from:
            return Band.UNREAD
        return Band.CURRENT_OVERLAP if len(covering) > 1 else Band.CURRENT
    if len(covering) > 1:
        return Band.OVERLAP
    return Band.EVEN if covering[0].index % 2 == 0 else Band.ODD


@given(texts, st.integers(1, 30), st.data())
def test_segments_rebuild_each_line_and_carry_the_right_band(
    text: str, size: int, data: st.DataObject
) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    windows = cut_windows("f", text, WindowParams(Unit.CHARS, size, overlap))
    current = data.draw(st.none() | st.integers(0, len(windows) - 1)) if windows else None
    chars_read = None
    unread_from = None
    if current is not None:
        chars_read = data.draw(st.integers(0, windows[current].length))
        unread_from = windows[current].start + chars_read
    lines = lay_out(text, windows, current, chars_read)
    raw_lines = text.splitlines()
    assert [line.number for line in lines] == list(range(1, len(raw_lines) + 1))
    position = 0
    for line, (raw, with_break) in zip(
        lines, zip(raw_lines, text.splitlines(keepends=True), strict=True), strict=True
    ):
        assert "".join(segment for segment, _ in line.segments) == printable(raw)
        offset = position
        for segment_text, band in line.segments:
            assert band == brute_force_band(offset, windows, current, unread_from)
            offset += len(segment_text)  # C0 controls show as one control picture each: lengths agree
        position += len(with_break)


def test_the_unread_tail_of_the_current_window_is_marked() -> None:
    text = "0123456789" * 3
    windows = cut_windows("f", text, WindowParams(Unit.CHARS, 10, 2))
    [line] = lay_out(text, windows, current=1, chars_read=6)
    assert list(line.segments) == [
        ("01234567", Band.EVEN),
        ("89", Band.CURRENT_OVERLAP),
        ("0123", Band.CURRENT),
        ("45", Band.UNREAD),
        ("67", Band.UNREAD),
        ("890123", Band.EVEN),
        ("45", Band.OVERLAP),
        ("6789", Band.ODD),
    ]
