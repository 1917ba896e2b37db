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

from raglens.display import excerpt, similarity_bar
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


def hit_text(hit: Hit, lines: HitExcerpt) -> Text:
    """One hit as text: a heading line, then the window's first lines, whitespace kept."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"{hit.rank:>2} ", style="bold")
    text.append(f"{hit.score:.3f} ", style="bold cyan")
    text.append(similarity_bar(hit.score, BAR_WIDTH), style="cyan")
    text.append("  ")
    text.append(printable_name(hit.window.citation), style="green")
    if lines.within_noise:
        text.append("  within noise", style="magenta")
    if lines.literal:
        text.append(printable(f"  ≡ {lines.literal}"), style="yellow")
    if lines.stale:
        text.append("  changed on disk since indexed (r re-scans)", style="bold yellow")
    for line in lines.lines:
        text.append("\n   │ ", style="dim")
        text.append_text(line)
    if lines.hidden:
        text.append(f"\n   │ … {lines.hidden} more line(s)", style="dim")
    return text


class HitItem(ListItem):
    """One hit in the list."""

    def __init__(self, hit: Hit, lines: HitExcerpt) -> None:
        super().__init__(Static(hit_text(hit, lines)))
        self.hit = hit
        self.stale = lines.stale
        self.marks = (lines.stale, lines.literal, lines.within_noise)
        """What the heading line marks besides the score: compared to skip redrawing the same hits."""

    def show(self, hit: Hit, lines: HitExcerpt) -> None:
        """Show another hit in this item: cheaper than mounting a new one."""
        self.hit = hit
        self.stale = lines.stale
        self.marks = (lines.stale, lines.literal, lines.within_noise)
        self.query_one(Static).update(hit_text(hit, lines))


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
