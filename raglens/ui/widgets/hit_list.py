"""The hits pane: top-k windows with rank, score, an absolute similarity bar, citation and raw text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.message import Message
from textual.widget import Widget
from textual.widgets import ListItem, ListView, Static

from raglens.display import excerpt, fit_citation, similarity_bar
from raglens.printable import printable, printable_name
from raglens.ui.highlight import highlighted

if TYPE_CHECKING:  # it imports numpy, which the app loads only after its first frame
    from raglens.search import Hit, SearchResult

EXCERPT_LINES = 6
BAR_WIDTH = 12
"""Narrower than the CLI's bar, so the citation fits beside it in a pane."""


@dataclass(frozen=True)
class HitExcerpt:
    """The first lines of a hit's window, coloured, and how many lines were left out."""

    lines: tuple[Text, ...]
    hidden: int
    stale: bool = False
    """The file changed on disk after it was indexed: the text shown may no longer be there."""
    literal: str = ""
    """What of the query the window contains literally (``contains drain_jobs``), if anything."""
    within_noise: bool = False
    """The score is no higher than an off-topic control question's best."""


def hit_excerpt(
    hit: Hit, file_text: str, *, stale: bool = False, literal: str = "", within_noise: bool = False
) -> HitExcerpt:
    """The window's first lines, made printable and syntax-coloured by its file's kind.

    Colouring imports Pygments on first use: call this from a worker, not the UI thread.
    """
    shown, hidden = excerpt(hit.window.text_in(file_text), EXCERPT_LINES)
    coloured = highlighted(hit.window.path, "\n".join(shown))
    lines = tuple(coloured.split("\n", allow_blank=True))[: len(shown)]
    return HitExcerpt(lines, hidden, stale, literal, within_noise)


def _markers(lines: HitExcerpt) -> Text:
    """What the heading says besides the score and citation, each after two spaces."""
    markers = Text()
    if lines.within_noise:
        markers.append("  within noise", style="magenta")
    if lines.literal:
        markers.append(printable(f"  ≡ {lines.literal}"), style="yellow")
    if lines.stale:
        markers.append("  changed on disk since indexed (r re-scans)", style="bold yellow")
    return markers


HEADING_INDENT = "   "


def _heading_rest(path: str, line_range: str, markers: Text, width: int | None, used: int) -> list[Text]:
    """The citation and markers after the bar, on as few lines as keep them whole in ``width``.

    Beside the bar if they fit (the path shortened from the left, its file name kept); else the
    markers, then the citation too, move to lines of their own.
    """
    whole = path + line_range
    name = path.rsplit("/", 1)[-1]
    shortest = len(name) + len(line_range) + (2 if name != path else 0)  # "…/" + name + range
    below = Text("\n" + HEADING_INDENT)

    def citation(room: int) -> Text:
        return Text(fit_citation(path, line_range, room), style="green")

    if width is None:
        return [Text(whole, style="green"), markers]
    beside = width - used
    if shortest + markers.cell_len <= beside:  # all of it on the heading line
        return [citation(beside - markers.cell_len), markers]
    if shortest <= beside:  # the citation beside the bar, the markers below
        return [citation(beside), *([below, markers] if markers else [])]
    room = width - len(HEADING_INDENT)  # the citation on a line of its own
    if shortest + markers.cell_len <= room:
        return [below, citation(room - markers.cell_len), markers]
    return [below, citation(room), *([below, markers] if markers else [])]


def hit_text(hit: Hit, lines: HitExcerpt, width: int | None = None) -> Text:
    """One hit as text: a heading line, then the window's first lines, whitespace kept.

    In ``width`` columns the citation's path is shortened from the left, never its line range, and
    the markers move to a line of their own rather than be cut.
    """
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"{hit.rank:>2} ", style="bold")
    text.append(f"{hit.score:.3f} ", style="bold cyan")
    text.append(similarity_bar(hit.score, BAR_WIDTH), style="cyan")
    text.append("  ")
    window = hit.window
    path, line_range = printable_name(window.path), f":L{window.line_start}-L{window.line_end}"
    for part in _heading_rest(path, line_range, _markers(lines), width, text.cell_len):
        text.append_text(part)
    for line in lines.lines:
        text.append("\n   │ ", style="dim")
        text.append_text(line)
    if lines.hidden:
        text.append(f"\n   │ … {lines.hidden} more line(s)", style="dim")
    return text


class HitBody(Static):
    """A hit's heading and excerpt, laid out for the width it is drawn in."""

    def __init__(self, hit: Hit, lines: HitExcerpt) -> None:
        super().__init__()
        self.hit, self.lines = hit, lines

    def show(self, hit: Hit, lines: HitExcerpt) -> None:
        self.hit, self.lines = hit, lines
        self.refresh(layout=True)

    def render(self) -> Text:
        return hit_text(self.hit, self.lines, self.size.width or None)


class HitItem(ListItem):
    """One hit in the list."""

    def __init__(self, hit: Hit, lines: HitExcerpt) -> None:
        super().__init__(HitBody(hit, lines))
        self.hit = hit
        self.stale = lines.stale
        self.marks = (lines.stale, lines.literal, lines.within_noise)
        """What the heading line marks besides the score: compared to skip redrawing the same hits."""

    def show(self, hit: Hit, lines: HitExcerpt) -> None:
        """Show another hit in this item: cheaper than mounting a new one."""
        self.hit = hit
        self.stale = lines.stale
        self.marks = (lines.stale, lines.literal, lines.within_noise)
        self.query_one(HitBody).show(hit, lines)


class HitList(Widget):
    """A summary line and the ranked hits; choosing one asks to open its window."""

    DEFAULT_CSS = """
    HitList { layout: vertical; }
    HitList > #hit-summary { height: auto; padding: 0 1; }
    HitList > ListView { height: 1fr; }
    HitList HitItem { padding: 0 0 1 0; }
    HitList HitItem Static { text-wrap: nowrap; text-overflow: ellipsis; }
    """

    class HitSelected(Message):
        """The user chose a hit."""

        def __init__(self, hit: Hit) -> None:
            super().__init__()
            self.hit = hit

    def compose(self) -> ComposeResult:
        yield Static(Text("type a question above", style="dim"), id="hit-summary")
        yield ListView(id="hit-items")

    @property
    def hits(self) -> list[Hit]:
        """The hits on display, best first."""
        return [item.hit for item in self.query(HitItem)]

    @property
    def highlighted_hit(self) -> Hit | None:
        """The hit under the list's cursor, else the top hit; None when there are none."""
        item = self.query_one("#hit-items", ListView).highlighted_child
        if isinstance(item, HitItem):
            return item.hit
        hits = self.hits
        return hits[0] if hits else None

    def show_summary(self, summary: Text) -> None:
        self.query_one("#hit-summary", Static).update(summary)

    async def show_result(self, result: SearchResult, excerpts: Sequence[HitExcerpt], summary: Text) -> None:
        """Replace the hits with ``result``'s; the same hits (new scores or marks at most) keep the cursor."""
        self.show_summary(summary)
        shown_now = [(item.hit.row, item.hit.score, item.marks) for item in self.query(HitItem)]
        wanted = [
            (h.row, h.score, (e.stale, e.literal, e.within_noise))
            for h, e in zip(result.hits, excerpts, strict=True)
        ]
        if shown_now == wanted:
            return
        items = self.query_one("#hit-items", ListView)
        # Reuse the items on screen; mounting five new ones stalled the event loop for 60-75 ms.
        shown = list(self.query(HitItem))
        pairs = list(zip(result.hits, excerpts, strict=True))
        for item, (hit, lines) in zip(shown, pairs, strict=False):
            item.show(hit, lines)
        if len(shown) > len(pairs):
            await items.remove_items(range(len(pairs), len(shown)))
        elif len(pairs) > len(shown):
            await items.extend(HitItem(hit, lines) for hit, lines in pairs[len(shown) :])
        if [row for row, _, _ in shown_now] != [hit.row for hit in result.hits]:
            items.index = 0 if pairs else None  # new hits: start at the top; new marks only: stay
            items.scroll_home(animate=False)

    async def clear_hits(self, summary: Text) -> None:
        self.show_summary(summary)
        await self.query_one("#hit-items", ListView).clear()

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        event.stop()
        if isinstance(event.item, HitItem):
            self.post_message(self.HitSelected(event.item.hit))
