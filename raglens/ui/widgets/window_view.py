"""The window view: a file's text with line numbers and its window grid drawn over it."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import ScrollableContainer
from textual.widget import Widget
from textual.widgets import Static

from raglens.embedding import ReadingExtent
from raglens.printable import printable
from raglens.window_layout import Band, lay_out
from raglens.windows import Window

BAND_STYLES: dict[Band, str] = {
    Band.OUTSIDE: "dim",
    Band.EVEN: "on #1b2b3c",
    Band.ODD: "on #33263d",
    Band.OVERLAP: "on #4a3b12",
    Band.CURRENT: "on #1f4e79",
    Band.CURRENT_OVERLAP: "on #6b5a12",
    Band.UNREAD: "strike on #5c1f1f",
}
"""Dim alternating bands per window, amber overlaps, blue for the selected one, red where reading stops."""


def window_header(
    path: str, windows: Sequence[Window], current: int | None, extent: ReadingExtent | None
) -> Text:
    """``path · window i of n · lines · characters · tokens · how much the model reads``."""
    header = Text(printable(path), style="bold")
    if current is None or not windows:
        header.append("  no windows", style="dim")
        return header
    window = windows[current]
    header.append(f"  window {current + 1} of {len(windows)}", style="bold cyan")
    header.append(f"  L{window.line_start}-L{window.line_end}  chars {window.start}-{window.end}")
    if extent is None:
        header.append("  tokens: not embedded yet", style="dim")
    elif extent.chars_read < window.length:
        unread = window.length - extent.chars_read
        header.append(f"  {extent.token_count} tokens", style="yellow")
        header.append(
            f"  the model stops after {extent.chars_read} chars; last {unread} unread", style="bold red"
        )
    else:
        header.append(f"  {extent.token_count} tokens, all read", style="green")
    return header


def render_file(text: str, windows: Sequence[Window], current: int | None, chars_read: int | None) -> Text:
    """The file's lines with a line-number gutter, each segment styled by its band."""
    lines = lay_out(text, windows, current, chars_read)
    width = len(str(len(lines))) if lines else 1
    rendered = Text(no_wrap=True, overflow="ellipsis")
    current_lines = range(0)
    if current is not None and windows:
        current_lines = range(windows[current].line_start, windows[current].line_end + 1)
    for line in lines:
        gutter_style = "bold cyan" if line.number in current_lines else "dim"
        rendered.append(f"{line.number:>{width}} │ ", style=gutter_style)
        for segment, band in line.segments:
            rendered.append(segment, style=BAND_STYLES[band])
        rendered.append("\n")
    return rendered


class WindowView(Widget):
    """Shows one file and its windows; the app tells it which file and window to show."""

    DEFAULT_CSS = """
    WindowView { layout: vertical; }
    WindowView > #window-header { height: auto; padding: 0 1; background: $boost; }
    WindowView > ScrollableContainer { height: 1fr; overflow-x: auto; overflow-y: auto; }
    WindowView #window-text { width: auto; text-wrap: nowrap; }
    """

    def compose(self) -> ComposeResult:
        yield Static(Text("select a file or a hit", style="dim"), id="window-header")
        with ScrollableContainer(id="window-scroll"):
            yield Static(id="window-text")

    def show(
        self,
        path: str,
        text: str,
        windows: Sequence[Window],
        current: int | None,
        extent: ReadingExtent | None,
        scroll: bool = True,
    ) -> None:
        """Draw ``path`` with ``windows``; with ``scroll``, bring the ``current`` window into view."""
        chars_read = extent.chars_read if extent is not None else None
        self.query_one("#window-header", Static).update(window_header(path, windows, current, extent))
        self.query_one("#window-text", Static).update(render_file(text, windows, current, chars_read))
        if not scroll:
            return
        scroller = self.query_one("#window-scroll", ScrollableContainer)
        if current is not None and windows:
            scroller.scroll_to(y=max(windows[current].line_start - 3, 0), animate=False)
        else:
            scroller.scroll_home(animate=False)

    def show_message(self, title: str, message: str) -> None:
        """Show a note instead of a file, such as why a file is skipped."""
        self.query_one("#window-header", Static).update(Text(printable(title), style="bold"))
        self.query_one("#window-text", Static).update(Text(printable(message), style="italic"))
