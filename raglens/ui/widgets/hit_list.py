"""The hits pane: top-k windows with rank, score, an absolute similarity bar, citation and raw text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.message import Message
from textual.widget import Widget
from textual.widgets import ListItem, ListView, Static

from raglens.display import excerpt, similarity_bar
from raglens.printable import printable

if TYPE_CHECKING:  # both import numpy, which the app loads only after its first frame
    from raglens.corpus import Corpus
    from raglens.search import Hit, SearchResult

EXCERPT_LINES = 6
BAR_WIDTH = 12
"""Narrower than the CLI's bar, so the citation fits beside it in a pane."""


def hit_text(hit: Hit, file_text: str) -> Text:
    """One hit as text: a heading line, then the window's first lines, whitespace kept."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"{hit.rank:>2} ", style="bold")
    text.append(f"{hit.score:.3f} ", style="bold cyan")
    text.append(similarity_bar(hit.score, BAR_WIDTH), style="cyan")
    text.append("  ")
    text.append(printable(hit.window.citation), style="green")
    shown, hidden = excerpt(hit.window.text_in(file_text), EXCERPT_LINES)
    for line in shown:
        text.append("\n   │ ", style="dim")
        text.append(line)
    if hidden:
        text.append(f"\n   │ … {hidden} more line(s)", style="dim")
    return text


class HitItem(ListItem):
    """One hit in the list."""

    def __init__(self, hit: Hit, file_text: str) -> None:
        super().__init__(Static(hit_text(hit, file_text)))
        self.hit = hit


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

    def show_summary(self, summary: Text) -> None:
        self.query_one("#hit-summary", Static).update(summary)

    async def show_result(self, result: SearchResult, corpus: Corpus, summary: Text) -> None:
        """Replace the hits with ``result``'s; the same hits again keep the list and its cursor."""
        self.show_summary(summary)
        if [(h.row, h.score) for h in self.hits] == [(h.row, h.score) for h in result.hits]:
            return
        items = self.query_one("#hit-items", ListView)
        await items.clear()
        await items.extend(HitItem(hit, corpus.file(hit.window.path).text) for hit in result.hits)
        items.index = 0 if result.hits else None

    async def clear_hits(self, summary: Text) -> None:
        self.show_summary(summary)
        await self.query_one("#hit-items", ListView).clear()

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        event.stop()
        if isinstance(event.item, HitItem):
            self.post_message(self.HitSelected(event.item.hit))
