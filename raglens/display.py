"""Text shapes shared by the CLI and the app: similarity bars and raw-text excerpts."""

from __future__ import annotations

from raglens.printable import printable

BAR_WIDTH = 20
_EIGHTHS = " ▏▎▍▌▋▊▉"


def similarity_bar(score: float, width: int = BAR_WIDTH) -> str:
    """A bar whose length is the cosine on an absolute 0..1 scale; never rescaled per query."""
    clamped = min(max(score, 0.0), 1.0)
    eighths = round(clamped * width * 8)
    full, part = divmod(eighths, 8)
    bar = "█" * full + (_EIGHTHS[part] if part else "")
    return bar.ljust(width, "·")


def excerpt(text: str, max_lines: int | None) -> tuple[list[str], int]:
    """The first ``max_lines`` lines (None: all) of ``text`` made printable, and how many were left out.

    Trailing blank lines are dropped first.
    """
    lines = printable(text).split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if max_lines is None:
        return lines, 0
    return lines[:max_lines], max(len(lines) - max_lines, 0)


def describe_age(seconds: float) -> str:
    """A duration as people say it: ``40 s``, ``12 min``, ``3 h``, ``5 days``."""
    if seconds < 90:
        return f"{max(seconds, 0):.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 36 * 3600:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days"


def shortest_citation(path: str, line_range: str) -> str:
    """The shortest form :func:`fit_citation` gives with the file name whole: ``…/name.py:L3-L9``."""
    _, slash, name = path.rpartition("/")
    return ("…/" + name if slash else path) + line_range


def fit_citation(path: str, line_range: str, room: int) -> str:
    """``path`` + ``line_range`` in at most ``room`` columns, the path shortened from the left.

    The line range is never cut, and the file name is kept whole as long as it fits:
    ``…/shell_completion.py:L568-L590``. With no room for the path, ``…`` and the range; below the
    range's own width, the range alone.
    """
    whole = path + line_range
    if len(whole) <= room:
        return whole
    room_for_path = room - len(line_range) - 1  # one column for the ellipsis
    if room_for_path <= 0:
        return "…" + line_range if room > len(line_range) else line_range
    tail = path[-room_for_path:]
    slash = tail.find("/")
    if 0 <= slash < len(tail) - 1 and "/" in path[: len(path) - len(tail) + slash]:
        tail = tail[slash:]  # start at a folder boundary: "…/name.py", not "…me/name.py"
    return "…" + tail + line_range


def duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``2 h 05 min``: as precise as a time left can honestly be."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"
