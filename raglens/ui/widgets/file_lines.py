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

from raglens.ui.soft_wrap import TAB_SIZE, WrappedRows, shown_lines
from raglens.window_layout import Band, FileLayout

MIN_WRAP_WIDTH = 8
"""Narrower than this, a wrapped line would be a column of single letters: wrap at this width instead."""

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
_OTHER_GUTTER = Style.parse("bold magenta")


def widest_line(lines: list[str]) -> int:
    """The width in cells of the widest of ``lines`` (as :func:`shown_lines` gives them)."""
    return max((len(line) if line.isascii() else cell_len(line) for line in lines), default=0)


HEAT_STEPS: tuple[tuple[float, str], ...] = (
    (0.1, "#0e1a13"),
    (0.2, "#11301e"),
    (0.3, "#15462a"),
    (0.4, "#1a5d36"),
    (0.5, "#1f7543"),
    (0.6, "#258d50"),
    (2.0, "#2ca85f"),
)
"""Background by score on the absolute cosine scale (the same for every query): dark to bright green.

One hue that no band uses, so a hot window cannot be taken for an amber overlap or a red unread tail.
"""
_HEAT_STYLES = tuple((bound, Style.parse(f"on {colour}")) for bound, colour in HEAT_STEPS)
_HEATED_BANDS = frozenset({Band.EVEN, Band.ODD, Band.OVERLAP})


def heat_style(score: float) -> Style:
    """The background of text whose best window scores ``score``."""
    return next(style for bound, style in _HEAT_STYLES if score < bound)


def heat_legend() -> Text:
    """``heat (m): cosine <0.1 ▇ 0.1 ▇ … ≥0.6 ▇``: which colour is which score, for the window header."""
    legend = Text("heat (m) on:", style="bold")
    lower = 0.0
    for bound, colour in HEAT_STEPS:
        label = f"<{bound:.1f}" if lower == 0.0 else (f"≥{lower:.1f}" if bound > 1 else f"{lower:.1f}")
        legend.append(f" {label}")
        legend.append("  ", style=f"on {colour}")
        lower = bound
    legend.append("  cosine, the same scale for every query", style="dim")
    return legend


def line_content(layout: FileLayout, number: int) -> Text:
    """Line ``number`` of ``layout``, each segment styled by its band, tabs expanded.

    With heat, text outside the selected window is coloured by its window's score instead.
    """
    content = Text(no_wrap=True)
    line = layout.line(number)
    heats = line.heats or (None,) * len(line.segments)
    for (segment, band), heat in zip(line.segments, heats, strict=True):
        style = heat_style(heat) if heat is not None and band in _HEATED_BANDS else BAND_STYLES[band]
        content.append(segment, style=style)
    content.expand_tabs(TAB_SIZE)  # before the gutter, so tab stops count from the line's own start
    return content


def _gutter(layout: FileLayout, number: int, gutter_width: int, first_row: bool = True) -> Text:
    """The line number (on a line's first row only) and its rule: ``│``, or a yellow ``┆`` at a cut."""
    style = _CURRENT_GUTTER if number in layout.current_lines else _GUTTER
    label = f"{number:>{gutter_width}} " if first_row else " " * (gutter_width + 1)
    gutter = Text(no_wrap=True)
    if number in layout.cut_lines:
        gutter.append(label, style=style)
        gutter.append("┆ ", style=_CUT_GUTTER)
    elif first_row and number in layout.other_starts:
        gutter.append(label, style=style)
        gutter.append("▸ ", style=_OTHER_GUTTER)
    else:
        gutter.append(f"{label}│ ", style=style)
    return gutter


def line_text(layout: FileLayout, number: int, gutter_width: int) -> Text:
    """Line ``number`` of ``layout`` with its line-number gutter, unwrapped."""
    text = _gutter(layout, number, gutter_width)
    text.append_text(line_content(layout, number))
    return text


def wrapped_line_rows(
    layout: FileLayout, number: int, starts: tuple[int, ...], gutter_width: int
) -> list[Text]:
    """Line ``number`` of ``layout`` cut into rows at ``starts`` (see :class:`WrappedRows`), each with
    its gutter: the number on the first row only, the rule (and a cut's ``┆``) on every row."""
    content = line_content(layout, number)
    ends = (*starts[1:], len(content))
    rows = []
    for piece, (start, end) in enumerate(zip(starts, ends, strict=True)):
        row = _gutter(layout, number, gutter_width, first_row=piece == 0)
        row.append_text(content[start:end])
        rows.append(row)
    return rows


class FileLines(ScrollView, can_focus=True):
    """Shows a :class:`FileLayout`, wrapped or not, or a short note in place of a file."""

    DEFAULT_CSS = """
    FileLines { height: 1fr; scrollbar-gutter: stable; scrollbar-size-vertical: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._layout: FileLayout | None = None
        self._lines: list[str] = []
        """The layout's lines as drawn (printable, tabs expanded): what wrapping measures."""
        self._widest = 0
        self._note: list[Text] = []
        self._gutter_width = 1
        self._strips: LRUCache[int, Strip] = LRUCache(1024)
        self.wrap = False
        """Whether long lines continue on the rows below instead of running off to the right."""
        self._rows: WrappedRows | None = None
        """With wrap on, which row shows which piece of which line."""
        self._last_wrapped: tuple[int, list[Text]] | None = None
        """The rows of the last wrapped line drawn: its other rows are usually drawn next."""
        self._anchor: tuple[int, int] | None = None
        """The line raglens last scrolled to the top, and the row that left the view at; None once the
        user scrolls. Wrapped again at another width, the view goes back to that line."""

    @property
    def layout_shown(self) -> FileLayout | None:
        """The layout on display, or None while a note is shown."""
        return self._layout

    def show_layout(
        self, layout: FileLayout, *, lines: list[str] | None = None, wrap: bool | None = None
    ) -> None:
        """Show ``layout``; pass its text's :func:`shown_lines` if they are already known.

        ``wrap`` turns soft wrap on or off (None: as it was).
        """
        if lines is None:
            lines = shown_lines(layout.text)
        if lines is not self._lines:
            self._lines, self._widest, self._rows = lines, widest_line(lines), None
        self._layout = layout
        self._note = []
        self._gutter_width = len(str(layout.line_count)) if layout.line_count else 1
        if wrap is not None and wrap != self.wrap:
            self.wrap = wrap
            self._rows = None
        self._lay_out_rows()

    def _lay_out_rows(self) -> None:
        """Set the rows and the scrollable size for the layout, wrapped to the width there is now."""
        self._strips.clear()
        self._last_wrapped = None
        layout = self._layout
        if layout is None:
            return
        prefix = self._gutter_width + 3
        if not self.wrap:
            self._rows = None
            self.virtual_size = Size(prefix + self._widest, layout.line_count)
        else:
            region = self.scrollable_content_region.width or self.size.width or 80
            width = max(region - prefix, MIN_WRAP_WIDTH)
            if self._rows is None or self._rows.width != width:
                self._rows = WrappedRows(self._lines, layout.line_count, width)
            self.virtual_size = Size(min(region, prefix + width), self._rows.row_count)
        self.refresh()

    def on_resize(self) -> None:
        if self.wrap and self._layout is not None:
            anchor = self._anchor
            self._lay_out_rows()
            if anchor is not None and round(self.scroll_y) == anchor[1]:
                # Nobody scrolled since: the rows changed under the view, the line it was brought to did not.
                self.scroll_to_line(anchor[0])
            # The scrollbar took its size from this layout pass, before the rows above: another pass
            # gives it theirs (else its thumb stayed where the old wrap put it until something moved).
            self.refresh(layout=True)

    def scroll_to_line(self, number: int) -> None:
        """Bring line ``number`` (1-based) to the top of the view, or as near as the end of the file lets."""
        self.scroll_to(x=0, y=self.row_of_line(number), animate=False, force=True)
        self._anchor = (number, round(self.scroll_y))
        self.call_after_refresh(self._settle_scroll)

    def _settle_scroll(self) -> None:
        """Once the new rows are laid out: scroll again where the first scroll was cut short, and give
        the scrollbar the scroll it missed.

        Scrolled before the layout knew its scrollbars, the view stopped where the end of the file
        seemed to be (a row short once the horizontal scrollbar took one), and the thumb stayed at
        the top until the next scroll. Nobody scrolled since: else the view is the user's.
        """
        anchor = self._anchor
        if anchor is not None and round(self.scroll_y) == anchor[1]:
            self.scroll_to(x=0, y=self.row_of_line(anchor[0]), animate=False, force=True)
            self._anchor = (anchor[0], round(self.scroll_y))
        if self.show_vertical_scrollbar and self.vertical_scrollbar.position != self.scroll_y:
            self.vertical_scrollbar.position = self.scroll_y

    def row_of_line(self, number: int) -> int:
        """The row on which line ``number`` (1-based) starts."""
        return self._rows.first_row(number) if self._rows is not None else number - 1

    def line_at_top(self) -> int:
        """The line (1-based) whose row is at the top of the view now."""
        row = round(self.scroll_y)
        return self._rows.locate(row)[0] if self._rows is not None else row + 1

    def show_note(self, note: Text) -> None:
        """Show ``note`` (already made printable) instead of a file."""
        self._layout = None
        self._rows = None
        self._note = list(note.split("\n"))
        self._strips.clear()
        self.virtual_size = Size(max((line.cell_len for line in self._note), default=0), len(self._note))
        self.scroll_to(0, 0, animate=False, force=True)
        self._anchor = None
        self.refresh()

    def shown_text(self, number: int) -> str:
        """Line ``number`` (1-based) as drawn, unwrapped, gutter included; the note's lines when no file."""
        if self._layout is None:
            return self._note[number - 1].plain
        return line_text(self._layout, number, self._gutter_width).plain

    def shown_rows(self, number: int) -> list[str]:
        """The plain text of each row line ``number`` takes, gutters included (one row unwrapped)."""
        if self._layout is None or self._rows is None:
            return [self.shown_text(number)]
        return [
            row.plain
            for row in wrapped_line_rows(
                self._layout, number, self._rows.starts[number - 1], self._gutter_width
            )
        ]

    def _row_text(self, row: int) -> Text:
        """What row ``row`` shows: a whole line, a piece of a wrapped one, or a line of the note."""
        layout = self._layout
        if layout is None:
            return self._note[row]
        if self._rows is None:
            return line_text(layout, row + 1, self._gutter_width)
        number, piece = self._rows.locate(row)
        if self._last_wrapped is None or self._last_wrapped[0] != number:
            starts = self._rows.starts[number - 1]
            self._last_wrapped = (number, wrapped_line_rows(layout, number, starts, self._gutter_width))
        return self._last_wrapped[1][piece].copy()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.size.width
        rich_style = self.rich_style
        if self._layout is not None:
            rows = self._rows.row_count if self._rows is not None else self._layout.line_count
        else:
            rows = len(self._note)
        if row >= rows:
            return Strip.blank(width, rich_style)
        strip = self._strips.get(row)
        if strip is None:
            text = self._row_text(row)
            text.stylize_before(rich_style)
            strip = Strip(text.render(self.app.console), text.cell_len)
            self._strips[row] = strip
        return strip.crop_extend(scroll_x, scroll_x + width, rich_style).apply_offsets(scroll_x, row)
