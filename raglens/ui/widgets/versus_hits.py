"""Configuration B's hits under A's: each with its score, citation and how it moved from A."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from raglens.display import fit_citation, shortest_citation, similarity_bar
from raglens.printable import printable, printable_name
from raglens.ui.widgets.fitted_text import FittedText

if TYPE_CHECKING:
    from raglens.compare import VersusRanking
    from raglens.search import Hit

BAR_WIDTH = 10
BAR_FROM = 60
"""Columns from which each hit has a similarity bar; a narrower pane keeps the citation whole instead."""
NARROW_BELOW = 50
"""Columns under which B's title and overlap take one line each (80x24 gives the pane 37)."""


def versus_text(title: str, ranking: VersusRanking | None, k: int, width: int | None) -> Text:
    """B's title, its top k with their movement from A, where A's hits went, and pinned answers."""
    narrow = width is not None and width < NARROW_BELOW
    if narrow:  # its state first (embedding, loading, stopped: why), then its settings, cut to one line
        first, *settings, state = title.split(" · ") if " · " in title else (title, "")
        title = " · ".join(part for part in (first, state, *settings) if part)
    text = Text(printable(title), style="bold magenta")
    if narrow and width is not None and text.cell_len > width:
        text.truncate(width, overflow="ellipsis")  # one line: B's rows need the room at 80x24
    if ranking is None:
        text.append("\nranked once a question is asked and B's model is ready", style="dim")
        return text
    result, comparison = ranking.result, ranking.comparison
    if result.ranked_count < result.window_count:
        text.append(f"\nranked over {result.ranked_count} of {result.window_count} windows", style="yellow")
    shared = f"{comparison.shared} of A's {len(comparison.a)} hits"
    overlap = (
        f"top-{k} overlap: {comparison.shared} of {len(comparison.a)}"
        if narrow
        else f"top-{k} overlap: {shared} have their text in B's top {k}"
    )
    text.append("\n" + overlap, style="dim")
    for hit, movement in zip(result.hits, comparison.b, strict=True):
        text.append_text(
            _hit_line(hit, result.bar_fraction(hit.score), movement.describe(k, side="b"), width)
        )
    moves = " · ".join(f"{m.rank} {m.describe(k, side='a')}" for m in comparison.a)
    text.append(f"\nA's hits in B: {moves}", style="dim")
    for move in ranking.expected:
        text.append("\n" + move.describe(), style="bold")
    return text


def _hit_line(hit: Hit, bar: float, moved: str, width: int | None) -> Text:
    """One of B's hits: rank, score, bar, citation and movement on one line where the citation keeps
    its file name whole; else without the bar, then with the movement on a line of its own, then the
    citation too (folders shortened, never the file name: ``…_applications.py`` beside
    ``…/applications.py`` read as one file). A file name wider than the whole pane is the one case
    left: it wraps. ``bar`` is how full the bar is: the cosine, or a BM25 score over the top one."""
    window = hit.window
    line_range = f":L{window.line_start}-L{window.line_end}"
    path = printable_name(window.path)
    head = Text(f"{hit.rank:>2} ", style="bold")
    head.append(f"{hit.score:.3f} ", style="bold cyan")
    if width is None:
        head.append(similarity_bar(bar, BAR_WIDTH) + " ", style="cyan")
        head.append(path + line_range, style="green")
        head.append(f"  {moved}", style="magenta")
        return Text("\n") + head
    shortest = len(shortest_citation(path, line_range))
    with_bar = width >= BAR_FROM and width - head.cell_len - BAR_WIDTH - 1 - len(moved) - 2 >= shortest
    if with_bar:
        head.append(similarity_bar(bar, BAR_WIDTH) + " ", style="cyan")
    room = width - head.cell_len
    if room - len(moved) - 2 >= shortest:
        head.append(fit_citation(path, line_range, room - len(moved) - 2), style="green")
        head.append(f"  {moved}", style="magenta")
    elif room >= shortest:
        head.append(fit_citation(path, line_range, room), style="green")
        head.append(f"\n   {moved}", style="magenta")
    else:
        head.append(f"\n   {fit_citation(path, line_range, max(width - 3, shortest))}", style="green")
        head.append(f"\n   {moved}", style="magenta")
    return Text("\n") + head


class VersusHits(FittedText[tuple[str, "VersusRanking | None", int]]):
    """B's side of the comparison, its citations fitted to the width; hidden until ``v`` starts one."""

    @property
    def ranking(self) -> VersusRanking | None:
        return self.source[1] if self.source is not None else None

    def show(self, title: str, ranking: VersusRanking | None, k: int) -> None:
        self.present((title, ranking, k))

    def text_for(self, width: int | None) -> Text:
        return versus_text(*self.source, width=width) if self.source is not None else Text()
