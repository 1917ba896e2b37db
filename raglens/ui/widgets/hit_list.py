"""The hits pane: top-k windows with rank, score, an absolute similarity bar, citation and raw text."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.message import Message
from textual.widget import Widget
from textual.widgets import ListItem, ListView

from raglens.display import excerpt, fit_citation, shortest_citation, similarity_bar
from raglens.printable import printable, printable_name
from raglens.query_words import query_stems, word_spans
from raglens.ui.highlight import highlighted
from raglens.ui.widgets.fitted_text import FittedText

if TYPE_CHECKING:  # it imports numpy, which the app loads only after its first frame
    from raglens.search import Hit, SearchResult

EXCERPT_LINES = 6
NARROW_EXCERPT_LINES = 1
"""In a pane under NARROW_BELOW columns (80x24 gives the hits 37): one line of each window (the first
holding a query word, else the first with text, with its line number and how many more there are), so
three hits with their citations fit under the question and its findings; e shows a hit whole."""
NARROW_BELOW = 50
BAR_WIDTHS = (12, 6)
"""The bar's width: 12 where the citation fits beside it (narrower than the CLI's), else 6, else none."""


QUERY_WORD_STYLE = "bold underline on #3d3d00"
"""Where the query's words occur in a preview (a background no band of the window view uses)."""


@dataclass(frozen=True)
class HitExcerpt:
    """A hit's window as coloured lines, with the query's words marked; the pane shows the first few."""

    lines: tuple[Text, ...]
    """Every line of the window, trailing blank lines dropped."""
    first_line: int = 1
    """The file's line number of the window's first line."""
    word_lines: tuple[int, ...] = ()
    """The indices into ``lines`` of the lines that hold one of the query's words."""
    stale: bool = False
    """The file changed on disk after it was indexed: the text shown may no longer be there."""
    literal: str = ""
    """What of the query the window contains literally (``contains drain_jobs``), if anything."""
    noise_mark: str = ""
    """``within noise`` or ``undecided`` (near the noise band's edge); empty above it or unjudged."""
    bar: float | None = None
    """How full the score's bar is (``SearchResult.bar_fraction``): a BM25 score over the top one;
    None draws the cosine itself."""

    def hidden(self, expanded: bool) -> int:
        """How many lines the preview leaves out."""
        return 0 if expanded else max(len(self.lines) - EXCERPT_LINES, 0)


def hit_excerpt(
    hit: Hit,
    file_text: str,
    *,
    query: str = "",
    stale: bool = False,
    literal: str = "",
    noise_mark: str = "",
    bar: float | None = None,
) -> HitExcerpt:
    """The window's lines, made printable, syntax-coloured by its file's kind, the query's words marked.

    Colouring imports Pygments on first use: call this from a worker, not the UI thread.
    """
    shown, _ = excerpt(hit.window.text_in(file_text), None)
    joined = "\n".join(shown)
    coloured = highlighted(hit.window.path, joined)
    line_starts = list(accumulate((len(line) + 1 for line in shown[:-1]), initial=0))
    word_lines: set[int] = set()
    for start, end in word_spans(joined, query_stems(query)):
        coloured.stylize(QUERY_WORD_STYLE, start, end)
        word_lines.add(bisect_right(line_starts, start) - 1)
    lines = tuple(coloured.split("\n", allow_blank=True))[: len(shown)]
    return HitExcerpt(
        lines, hit.window.line_start, tuple(sorted(word_lines)), stale, literal, noise_mark, bar
    )


def _markers(lines: HitExcerpt) -> list[Text]:
    """What the heading says besides the score and citation, one Text per mark."""
    markers = []
    if lines.noise_mark:
        markers.append(
            Text(lines.noise_mark, style="magenta" if lines.noise_mark == "within noise" else "yellow")
        )
    if lines.literal:
        markers.append(Text(printable(f"≡ {lines.literal}"), style="yellow"))
    if lines.stale:
        markers.append(Text("changed on disk since indexed (r re-scans)", style="bold yellow"))
    return markers


HEADING_INDENT = "   "
MARK_GAP = "  "


def _beside(markers: list[Text]) -> Text:
    """The markers on one line, each after two spaces."""
    line = Text()
    for marker in markers:
        line.append(MARK_GAP)
        line.append_text(marker)
    return line


def _below(markers: list[Text], room: int) -> list[Text]:
    """The markers on lines of their own under the heading, as many per line as fit in ``room``;
    one longer than ``room`` continues on the next line rather than be cut."""
    lines: list[Text] = []
    for marker in markers:
        if lines and lines[-1].cell_len + len(MARK_GAP) + marker.cell_len <= room:
            lines[-1].append(MARK_GAP)
            lines[-1].append_text(marker)
        else:
            lines.append(marker.copy())
    parts: list[Text] = []
    for line in lines:
        for piece in line.divide(range(max(room, 1), len(line), max(room, 1))):
            parts += [Text("\n" + HEADING_INDENT), piece]
    return parts


def _heading_rest(
    path: str, line_range: str, markers: list[Text], width: int | None, used: int
) -> list[Text]:
    """The citation and markers after the bar, on as few lines as keep them whole in ``width``.

    Beside the bar if they fit (the path shortened from the left, its file name kept); else the
    markers, then the citation too, move to lines of their own.
    """
    whole = path + line_range
    name = path.rsplit("/", 1)[-1]
    shortest = len(name) + len(line_range) + (2 if name != path else 0)  # "…/" + name + range
    below = Text("\n" + HEADING_INDENT)
    beside_bar = _beside(markers)

    def citation(room: int) -> Text:
        return Text(fit_citation(path, line_range, room), style="green")

    if width is None:
        return [Text(whole, style="green"), beside_bar]
    beside = width - used
    room = width - len(HEADING_INDENT)
    if shortest + beside_bar.cell_len <= beside:  # all of it on the heading line
        return [citation(beside - beside_bar.cell_len), beside_bar]
    if shortest <= beside:  # the citation beside the bar, the markers below
        return [citation(beside), *_below(markers, room)]
    if shortest + beside_bar.cell_len <= room:  # the citation and markers on a line of their own
        return [below, citation(room - beside_bar.cell_len), beside_bar]
    if shortest <= room:
        return [below, citation(room), *_below(markers, room)]
    # Not even the file name and the range fit one line: the path, then the range below it.
    path_only = Text(fit_citation(path, "", room), style="green")
    return [below, path_only, below, Text(line_range, style="green"), *_below(markers, room)]


HIDDEN_WORD_LINES_NAMED = 4


def _fold_line(lines: HitExcerpt, width: int | None) -> Text:
    """What the folded preview leaves out, where the query's words are among it, and how to see it,
    naming fewer of those lines rather than cut the line in ``width`` columns."""
    hidden = [lines.first_line + i for i in lines.word_lines if i >= EXCERPT_LINES]
    start = f"\n   │ … {lines.hidden(False)} more line(s)"
    end = " · e shows all"
    for named in range(min(len(hidden), HIDDEN_WORD_LINES_NAMED), -1, -1):
        listed = ", ".join(f"L{number}" for number in hidden[:named])
        if named:
            words = f"; query words on {listed}{'…' if len(hidden) > named else ''}"
        elif hidden:
            words = "; query words below"
        else:
            words = ""
        if width is None or len(start) - 1 + len(words) + len(end) <= width or not named:
            break
    fold = Text(start, style="dim")
    fold.append(words, style="yellow")
    fold.append(end, style="dim")
    return fold


def hit_text(hit: Hit, lines: HitExcerpt, width: int | None = None, *, expanded: bool = False) -> Text:
    """One hit as text: a heading line, then the window's first lines (all of them ``expanded``).

    In ``width`` columns the citation's path is shortened from the left, never its line range, and
    the markers move to a line of their own rather than be cut. Whitespace is kept as it is.
    """
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"{hit.rank:>2} ", style="bold")
    text.append(f"{hit.score:.3f} ", style="bold cyan")
    window = hit.window
    path, line_range = printable_name(window.path), f":L{window.line_start}-L{window.line_end}"
    shortest = cell_len(shortest_citation(path, line_range))
    fitting = [w for w in BAR_WIDTHS if width is None or text.cell_len + w + 2 + shortest <= width]
    bar = fitting[0] if fitting else BAR_WIDTHS[-1]
    if fitting or width is None or width >= NARROW_BELOW:
        text.append(similarity_bar(hit.score if lines.bar is None else lines.bar, bar), style="cyan")
        text.append("  ")
    for part in _heading_rest(path, line_range, _markers(lines), width, text.cell_len):
        text.append_text(part)
    narrow = width is not None and width < NARROW_BELOW
    if narrow and not expanded and lines.lines:
        # The line that says most: the first holding a query word, else the first with any text.
        at = next(iter(lines.word_lines), None)
        if at is None:
            at = next((n for n, line in enumerate(lines.lines) if line.plain.strip()), 0)
        more = f"+{len(lines.lines) - 1} " if len(lines.lines) > 1 else ""  # before the text: never cut
        text.append(f"\n   │ {more}L{lines.first_line + at}: ", style="dim")
        text.append_text(lines.lines[at])
        return text
    shown = lines.lines if expanded else lines.lines[:EXCERPT_LINES]
    for line in shown:
        text.append("\n   │ ", style="dim")
        text.append_text(line)
    if lines.hidden(expanded):
        text.append_text(_fold_line(lines, width))
    elif expanded and len(lines.lines) > (NARROW_EXCERPT_LINES if narrow else EXCERPT_LINES):
        text.append("\n   │ (whole window · e folds)", style="dim")
    return text


@dataclass(frozen=True, eq=False)
class ShownHit:
    """What a hit's body shows: the hit, its window's lines, and whether all of them."""

    hit: Hit
    lines: HitExcerpt
    expanded: bool = False


class HitBody(FittedText[ShownHit]):
    """A hit's heading and excerpt, laid out for the width it is drawn in.

    Another hit of the same height is only repainted: laying the screen out again for each new
    question re-rendered its every widget (a 30-40 ms frame at 160x45 and 100k windows). It always
    shows a hit: a hit no longer shown goes with its item, so ``clear`` is never called on it.
    """

    def __init__(self, hit: Hit, lines: HitExcerpt, *, expanded: bool = False) -> None:
        super().__init__()
        self.source = ShownHit(hit, lines, expanded)
        self._text: tuple[ShownHit, int | None, Text] | None = None
        """The text last made, for the source and width it was made for: layout and render both ask."""

    @property
    def shown(self) -> ShownHit:
        """The hit on display."""
        assert self.source is not None  # given at construction; never cleared
        return self.source

    @property
    def hit(self) -> Hit:
        """The hit on display."""
        return self.shown.hit

    @property
    def lines(self) -> HitExcerpt:
        """Its window's lines, as coloured for display."""
        return self.shown.lines

    @property
    def expanded(self) -> bool:
        """Whether every line of the window is shown, not only the first few."""
        return self.shown.expanded

    def show(self, hit: Hit, lines: HitExcerpt, *, expanded: bool = False) -> None:
        self.present(ShownHit(hit, lines, expanded))

    def text_for(self, width: int | None) -> Text:
        shown, made = self.shown, self._text
        if made is None or made[0] is not shown or made[1] != width:
            made = (shown, width, hit_text(shown.hit, shown.lines, width, expanded=shown.expanded))
            self._text = made
        return made[2]

    def height_for(self, width: int) -> int:
        """The lines of the text laid out for ``width``; it never wraps (a long line ends in an ellipsis).

        Measured from ``width`` itself, not from the size the body had before this layout, which
        left the last line (the fold line) cut off when the pane narrowed.
        """
        return self.text_for(width or None).plain.count("\n") + 1


class HitItem(ListItem):
    """One hit in the list."""

    def __init__(self, hit: Hit, lines: HitExcerpt, *, expanded: bool = False) -> None:
        super().__init__(HitBody(hit, lines, expanded=expanded))
        self.hit = hit
        self.stale = lines.stale
        self.marks = (lines.stale, lines.literal, lines.noise_mark)
        """What the heading line marks besides the score: compared to skip redrawing the same hits."""

    @property
    def expanded(self) -> bool:
        """Whether the whole window is shown, not only its first lines."""
        return self.query_one(HitBody).expanded

    def show(self, hit: Hit, lines: HitExcerpt, *, expanded: bool = False) -> None:
        """Show another hit in this item: cheaper than mounting a new one."""
        self.hit = hit
        self.stale = lines.stale
        self.marks = (lines.stale, lines.literal, lines.noise_mark)
        self.query_one(HitBody).show(hit, lines, expanded=expanded)


class HitSummary(FittedText[Text]):
    """The line over the hits: which question they answer, over how many windows, and how exact."""

    def __init__(self, summary: Text, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.source = summary

    def text_for(self, width: int | None) -> Text:
        return self.source if self.source is not None else Text()


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

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._expanded_rows: set[int] = set()
        """The rows whose whole window is shown; a row keeps it while it stays among the hits."""

    def compose(self) -> ComposeResult:
        yield HitSummary(Text("type a question above", style="dim"), id="hit-summary")
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
        self.query_one(HitSummary).present(summary)

    async def show_result(self, result: SearchResult, excerpts: Sequence[HitExcerpt], summary: Text) -> None:
        """Replace the hits with ``result``'s; the same hits (new scores or marks at most) keep the cursor."""
        self.show_summary(summary)
        shown_now = [(item.hit.row, item.hit.score, item.marks) for item in self.query(HitItem)]
        wanted = [
            (h.row, h.score, (e.stale, e.literal, e.noise_mark))
            for h, e in zip(result.hits, excerpts, strict=True)
        ]
        if shown_now == wanted:
            return
        items = self.query_one("#hit-items", ListView)
        # Reuse the items on screen; mounting five new ones stalled the event loop for 60-75 ms.
        shown = list(self.query(HitItem))
        pairs = list(zip(result.hits, excerpts, strict=True))
        self._expanded_rows &= {hit.row for hit in result.hits}
        expanded = self._expanded_rows
        for item, (hit, lines) in zip(shown, pairs, strict=False):
            item.show(hit, lines, expanded=hit.row in expanded)
        if len(shown) > len(pairs):
            await items.remove_items(range(len(pairs), len(shown)))
        elif len(pairs) > len(shown):
            await items.extend(
                HitItem(hit, lines, expanded=hit.row in expanded) for hit, lines in pairs[len(shown) :]
            )
        if [row for row, _, _ in shown_now] != [hit.row for hit in result.hits]:
            items.index = 0 if pairs else None  # new hits: start at the top; new marks only: stay
            items.scroll_home(animate=False)

    def toggle_expanded(self) -> bool | None:
        """Show the whole window of the hit under the cursor (else the top hit), or fold it again.

        Returns whether it is now expanded; None when there are no hits.
        """
        items = self.query_one("#hit-items", ListView)
        item = items.highlighted_child
        if not isinstance(item, HitItem):
            item = next(iter(self.query(HitItem)), None)
        if item is None:
            return None
        expanded = not item.expanded
        self._expanded_rows.symmetric_difference_update({item.hit.row})
        body = item.query_one(HitBody)
        body.show(body.hit, body.lines, expanded=expanded)
        items.call_after_refresh(items.scroll_to_widget, item, animate=False, top=True)
        return expanded

    async def clear_hits(self, summary: Text) -> None:
        self.show_summary(summary)
        await self.query_one("#hit-items", ListView).clear()

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        event.stop()
        if isinstance(event.item, HitItem):
            self.post_message(self.HitSelected(event.item.hit))
