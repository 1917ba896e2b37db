"""The window view: a file's text with line numbers and its window grid drawn over it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Static

from raglens.embedding_events import ReadingExtent
from raglens.lines import LineIndex
from raglens.printable import printable, printable_name
from raglens.ui.soft_wrap import shown_lines
from raglens.ui.widgets.file_lines import FileLines, heat_legend
from raglens.window_layout import FileLayout
from raglens.windows import Window


@dataclass(frozen=True)
class FileLens:
    """What the current query says about the open file, for the window view to draw."""

    heat: list[float | None] | None = None
    """Each window's score, with heat on and a ranked query."""
    notes: tuple[str, ...] = ()
    """A sentence per pair of neighbouring windows that both rank."""
    cut_lines: frozenset[int] = frozenset()
    """The lines two ranking neighbours share: where the answer may be cut."""
    heat_on: bool = False
    """Whether heat mode is on (it may be on before any query has scores to colour by)."""
    other_starts: frozenset[int] = frozenset()
    """Lines where a window of configuration B starts, while its grid is laid over A's (o)."""


COMPACT_BELOW = 60
"""Columns under which the header takes its short form: at 80x24 the long one took 5 of 21 rows."""


def window_header(
    path: str,
    windows: Sequence[Window],
    current: int | None,
    extent: ReadingExtent | None,
    never_read_share: float | None = None,
    *,
    compact: bool = False,
) -> Text:
    """``path · window i of n · lines · characters · tokens · how much the model reads``.

    ``compact`` (a narrow pane): ``path  1/3  L1-L21  179 tok, last 290 chars unread  7% never read``,
    the character offsets left out.
    """
    header = Text(printable_name(path), style="bold")
    if never_read_share and not compact:
        header.append(f"  {never_read_share:.0%} of the file read by no window", style="bold #ff9e9e")
    if current is None or not windows:
        header.append("  no windows", style="dim")
        return header
    window = windows[current]
    if compact:
        header.append(f"  {current + 1}/{len(windows)}", style="bold cyan")
        header.append(f"  L{window.line_start}-L{window.line_end}")
    else:
        header.append(f"  window {current + 1} of {len(windows)}", style="bold cyan")
        header.append(f"  L{window.line_start}-L{window.line_end}  chars {window.start}-{window.end}")
    tokens = "tok" if compact else "tokens"
    if extent is None:
        header.append(f"  {tokens}: not embedded yet", style="dim")
    elif extent.chars_read < window.length:
        unread = window.length - extent.chars_read
        header.append(f"  {extent.token_count} {tokens}", style="yellow")
        stops = (
            f", last {unread} chars unread"
            if compact
            else f"  the model stops after {extent.chars_read} chars; last {unread} unread"
        )
        header.append(stops, style="bold red")
    else:
        header.append(f"  {extent.token_count} {tokens}, all read", style="green")
    if never_read_share and compact:
        header.append(f"  {never_read_share:.0%} never read", style="bold #ff9e9e")
    return header


_HeaderSource = tuple[
    str, Sequence[Window], "int | None", "ReadingExtent | None", "float | None", bool, FileLens
]


class WindowView(Widget):
    """Shows one file and its windows; the app tells it which file and window to show."""

    DEFAULT_CSS = """
    WindowView { layout: vertical; }
    WindowView > #window-header { height: auto; padding: 0 1; background: $boost; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._measured: tuple[str, LineIndex, list[str]] | None = None
        """The text last shown, its line index and lines as drawn: stepping windows reuses them."""
        self._header_source: _HeaderSource | None = None
        """What the header says, kept to draw it again when the pane's width crosses COMPACT_BELOW."""
        self._header_compact = False

    def compose(self) -> ComposeResult:
        yield Static(Text("select a file or a hit", style="dim"), id="window-header")
        yield FileLines(id="window-scroll")

    def show(
        self,
        path: str,
        text: str,
        windows: Sequence[Window],
        current: int | None,
        extent: ReadingExtent | None,
        scroll: bool = True,
        never_read: Sequence[tuple[int, int]] = (),
        lens: FileLens = FileLens(),
        wrap: bool = False,
    ) -> None:
        """Draw ``path`` with ``windows``; with ``scroll``, bring the ``current`` window into view.

        ``never_read`` are the spans no window's embedding reads, known once the file is embedded;
        ``lens`` what the current query says about the file: heat, straddle notes, and the lines
        marked with a yellow ┆ in the gutter, where two ranking windows meet; ``wrap`` soft-wraps
        long lines.
        """
        if self._measured is None or self._measured[0] is not text:
            self._measured = (text, LineIndex(text), shown_lines(text))
        _, lines, drawn = self._measured
        chars_read = extent.chars_read if extent is not None else None
        share = sum(end - start for start, end in never_read) / len(text) if text else None
        self._header_source = (path, windows, current, extent, share, wrap, lens)
        self._draw_header()
        file_lines = self.query_one(FileLines)
        layout = FileLayout(
            text,
            windows,
            current,
            chars_read,
            lines,
            never_read=never_read,
            heat=lens.heat,
            cut_lines=lens.cut_lines,
            other_starts=lens.other_starts,
        )
        file_lines.show_layout(layout, lines=drawn, wrap=wrap)
        if not scroll:
            return
        # Forced: the scrollbars of a layout just set are not known yet, and would refuse the scroll.
        file_lines.scroll_to_line(
            max(windows[current].line_start - 3, 1) if current is not None and windows else 1
        )

    def _draw_header(self) -> None:
        """The header for the file shown, in its short form in a narrow pane (redrawn on a resize)."""
        if self._header_source is None:
            return
        path, windows, current, extent, share, wrap, lens = self._header_source
        compact = 0 < self.size.width < COMPACT_BELOW
        self._header_compact = compact
        header = window_header(path, windows, current, extent, share, compact=compact)
        if wrap:
            header.append("  wrapped (s)", style="dim")
        if lens.heat_on:
            header.append("\n")
            header.append_text(heat_legend())
            if lens.heat is None:
                header.append("  (no ranked query yet)", style="dim")
        for note in lens.notes:
            header.append("\n" + printable(note), style="yellow")
        if lens.other_starts:
            count = len(lens.other_starts)
            grid = (
                f"B's grid (o): ▸ {count} line(s)"
                if compact
                else (f"B's grid (o): ▸ marks the {count} line(s) where a window of B starts")
            )
            header.append("\n" + grid, style="magenta")
        self.query_one("#window-header", Static).update(header)

    def on_resize(self) -> None:
        if self._header_source is not None and (0 < self.size.width < COMPACT_BELOW) != self._header_compact:
            self._draw_header()

    def show_message(self, title: str, message: str) -> None:
        """Show a note instead of a file, such as why a file is skipped."""
        self._header_source = None
        self.query_one("#window-header", Static).update(Text(printable_name(title), style="bold"))
        self.query_one(FileLines).show_note(Text(printable(message), style="italic"))
