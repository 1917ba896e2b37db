"""A scrolling view of a file's lines that renders only the lines on screen.

A Static holding a whole 1 MB file re-rendered every line on each change and froze the app for
3-5 s; here each visible line is laid out and rendered when it scrolls into view.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from raglens.printable import printable
from raglens.window_layout import Band, FileLayout

TAB_SIZE = 8

BAND_STYLES: dict[Band, Style] = {
    Band.OUTSIDE: Style.parse("dim"),
    Band.EVEN: Style.parse("on #1b2b3c"),
    Band.ODD: Style.parse("on #33263d"),
    Band.OVERLAP: Style.parse("on #4a3b12"),
    Band.CURRENT: Style.parse("on #1f4e79"),
    Band.CURRENT_OVERLAP: Style.parse("on #6b5a12"),
    Band.UNREAD: Style.parse("strike on #5c1f1f"),
    Band.NEVER_READ: Style.parse("strike bold #ff9e9e on #3d0a0a"),
}
"""Dim alternating bands per window, amber overlaps, blue for the selected one, red where reading stops."""

_GUTTER = Style.parse("dim")
_CURRENT_GUTTER = Style.parse("bold cyan")
_CUT_GUTTER = Style.parse("bold yellow")


def widest_line(text: str) -> int:
    """The width in cells of the widest line of ``text`` as shown: printable, tabs expanded."""
    widest = 0
    for line in printable(text).split("\n"):
        shown = line.expandtabs(TAB_SIZE) if "\t" in line else line
        widest = max(widest, len(shown) if shown.isascii() else cell_len(shown))
    return widest


HEAT_STEPS: tuple[tuple[float, Style], ...] = tuple(
    (bound, Style.parse(f"on {colour}"))
    for bound, colour in (
        (0.1, "#15152a"),
        (0.2, "#1f2d55"),
        (0.3, "#24506e"),
        (0.4, "#2f6b4f"),
        (0.5, "#6b6b24"),
        (0.6, "#85501a"),
        (2.0, "#8c1c1c"),
    )
)
"""Background by score on the absolute cosine scale (the same for every query): cold blue to hot red."""
_HEATED_BANDS = frozenset({Band.EVEN, Band.ODD, Band.OVERLAP})


def heat_style(score: float) -> Style:
    """The background of text whose best window scores ``score``."""
    return next(style for bound, style in HEAT_STEPS if score < bound)


def line_text(layout: FileLayout, number: int, gutter_width: int) -> Text:
    """Line ``number`` of ``layout`` with its line-number gutter, each segment styled by its band.

    With heat, text outside the selected window is coloured by its window's score instead.
    """
    content = Text(no_wrap=True)
    line = layout.line(number)
    heats = line.heats or (None,) * len(line.segments)
    for (segment, band), heat in zip(line.segments, heats, strict=True):
        style = heat_style(heat) if heat is not None and band in _HEATED_BANDS else BAND_STYLES[band]
        content.append(segment, style=style)
    content.expand_tabs(TAB_SIZE)  # before the gutter, so tab stops count from the line's own start
    gutter = _CURRENT_GUTTER if number in layout.current_lines else _GUTTER
    text = Text(no_wrap=True)
    if number in layout.cut_lines:
        text.append(f"{number:>{gutter_width}} ", style=gutter)
        text.append("┆ ", style=_CUT_GUTTER)
    else:
        text.append(f"{number:>{gutter_width}} │ ", style=gutter)
    text.append_text(content)
    return text


class FileLines(ScrollView, can_focus=True):
    """Shows a :class:`FileLayout`, or a short note in place of a file."""

    DEFAULT_CSS = """
    FileLines { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._layout: FileLayout | None = None
        self._note: list[Text] = []
        self._gutter_width = 1
        self._strips: LRUCache[int, Strip] = LRUCache(1024)

    @property
    def layout_shown(self) -> FileLayout | None:
        """The layout on display, or None while a note is shown."""
        return self._layout

    def show_layout(self, layout: FileLayout, *, widest: int | None = None) -> None:
        """Show ``layout``; pass the text's :func:`widest_line` if it is already known."""
        self._layout = layout
        self._note = []
        self._gutter_width = len(str(layout.line_count)) if layout.line_count else 1
        content_width = widest if widest is not None else widest_line(layout.text)
        self._strips.clear()
        self.virtual_size = Size(self._gutter_width + 3 + content_width, layout.line_count)
        self.refresh()

    def show_note(self, note: Text) -> None:
        """Show ``note`` (already made printable) instead of a file."""
        self._layout = None
        self._note = list(note.split("\n"))
        self._strips.clear()
        self.virtual_size = Size(max((line.cell_len for line in self._note), default=0), len(self._note))
        self.scroll_to(0, 0, animate=False, force=True)
        self.refresh()

    def shown_text(self, number: int) -> str:
        """The plain text of line ``number`` as it is drawn (1-based; the note's lines when no file)."""
        if self._layout is None:
            return self._note[number - 1].plain
        return line_text(self._layout, number, self._gutter_width).plain

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.size.width
        rich_style = self.rich_style
        rows = self._layout.line_count if self._layout is not None else len(self._note)
        if row >= rows:
            return Strip.blank(width, rich_style)
        strip = self._strips.get(row)
        if strip is None:
            if self._layout is not None:
                text = line_text(self._layout, row + 1, self._gutter_width)
            else:
                text = self._note[row]
            text.stylize_before(rich_style)
            strip = Strip(text.render(self.app.console), text.cell_len)
            self._strips[row] = strip
        return strip.crop_extend(scroll_x, scroll_x + width, rich_style).apply_offsets(scroll_x, row)
