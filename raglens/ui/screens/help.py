"""The help screen: what raglens shows and which keys drive it."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from raglens.ui.navigation import NARROW_BELOW

HELP_WIDTH = 72
"""The help's lines are laid out for this many columns: an 80-column terminal less the box's border,
padding and scrollbar, so no line of it is wrapped again on screen."""

KEYS = (
    ("/", "focus the question box (rankings update as you type; Enter ranks at once)"),
    ("escape", "leave the question box, so the single-letter keys below work"),
    ("n  p", "next / previous window (crosses into the next / previous file)"),
    ("+  -", "one more / one fewer hit (k)"),
    ("w", "window settings: size, overlap, unit, k (the index is rebuilt in the background)"),
    ("r", "re-scan the corpus: vectors of unchanged windows come from the cache"),
    (
        "t  h",
        f"focus the corpus tree / the hits; under {NARROW_BELOW} columns the corpus pane is folded "
        "away: t shows it, and choosing a file (or t again) folds it",
    ),
    ("e", "show the whole window of the highlighted hit in place; e again folds it"),
    (
        "i",
        "the score strip's findings whole; in a narrow pane each takes one line, cut with (i)",
    ),
    (
        "l",
        f"show or hide the pipeline log (under {NARROW_BELOW} columns: over the panes, full width)",
    ),
    (
        "m",
        "heat: colour each window of the open file by its score for the query (dark to bright "
        "green; the window header shows the scale while heat is on)",
    ),
    (
        "s",
        "soft-wrap long lines in the window view (on for prose files, off for code, until s)",
    ),
    (
        "a  u",
        "pin the highlighted hit's file, or a symbol its window holds, as the expected answer to "
        'this question; its rank is shown while the question is this one ("pinned for:" another '
        "question when you edit it; asking it again brings the pin back) / unpin",
    ),
    (
        "g",
        "save the question and its pins to the golden file (JSONL, for raglens eval), with a kind "
        "you choose; a question the file already holds is refused",
    ),
    ("N", "save the question as a negative: nothing in this corpus answers it"),
    (
        "x",
        "the eval grid over the golden file: which parameters to vary, then a progress bar, then "
        "the table (best row marked) and the chart, as raglens eval --grid prints them",
    ),
    ("c", "the prompt an LLM would get: the top-k windows, cited, and the question, with its size"),
    (
        "y",
        "why this score: the highlighted hit (or, from the window view, the selected window) with "
        "each token coloured by its exact share of the score, the question's words with theirs, and "
        "the score split into content, stop words, punctuation and special tokens; B beside A",
    ),
    ("f", "the failure lab: exact symbol, cut answer, other languages, unanswerable questions"),
    (
        "v  o",
        "compare with configuration B (other windows, model or token limit): B embeds in a process "
        "of its own and ranks the same question under A's hits, each hit with how it moved (↑2, gone "
        "(B #14), new (A #9)); B's score distribution is drawn under A's in the score strip, and a "
        "magenta ▸ in the window view's gutter marks where each of B's windows starts (o hides or "
        "shows B's grid); v again changes B or stops comparing",
    ),
    ("ctrl+p", "command palette"),
    ("? f1", "this help"),
    ("q ctrl+c", "quit"),
)

SECTIONS = (
    (
        "Window view",
        (
            ("alternating bands", "one window each"),
            ("amber", "an overlap: text that two windows share"),
            ("blue", "the selected window"),
            ("red, struck out", "past the model's token limit: embedded as if it were not there"),
            ("pink, struck out", "past the limit of every window that holds it: no embedding reads it"),
            ("yellow ┆ gutter", "lines two neighbouring windows share when both rank: an answer may be cut"),
        ),
    ),
)

PROSE: tuple[tuple[str | None, str], ...] = (
    (
        "Score strip (above the hits)",
        "the scores of every window on a fixed -0.25..1.00 axis; ~ the noise band (the best scores "
        "of 32 off-topic control questions), ? its edge (their 95th percentile) give or take their "
        'spread, k the k-th hit, ▲ the top. A hit marked "within noise" scores like a question the '
        'corpus cannot answer; "undecided" is too near the edge to tell; "≡ contains" marks '
        "literal matches. A question in a language the model does not read gets no verdict, and the "
        "strip says so. In each hit's preview the query's words are underlined; a folded preview "
        "says on which of its hidden lines they occur. In a narrow pane a hit shows one line of its "
        "window: +16 L81: is that line (line 81 of the file), with 16 more in the window (e shows them).",
    ),
    (None, 'A hit marked "changed on disk" comes from a file edited after it was indexed; r re-scans.'),
    (
        None,
        "Scores are cosines (-1 to 1; the bars and the strip start at 0 and -0.25), never rescaled per "
        "query: when nothing in the corpus is near, every bar is short.",
    ),
)


def help_text(width: int = HELP_WIDTH) -> str:
    """The help laid out for ``width`` columns, each key's description under the one before."""
    import textwrap

    lines = textwrap.wrap(
        "raglens runs rung-1 naive RAG on your files and shows every step: fixed windows, one "
        "embedding model, cosine top-k with no floor. Escape, q or ? closes this help.",
        width,
    )
    lines += ["", "Keys"]
    for key, description in KEYS:
        lines += textwrap.wrap(description, width, initial_indent=f"  {key:<9}", subsequent_indent=" " * 11)
    for title, entries in SECTIONS:
        lines += ["", title]
        for name, meaning in entries:
            lines += textwrap.wrap(meaning, width, initial_indent=f"  {name:<20}", subsequent_indent=" " * 22)
    for heading, paragraph in PROSE:
        indent = "  " if heading else ""
        lines += [""] + ([heading] if heading else [])
        lines += textwrap.wrap(paragraph, width, initial_indent=indent, subsequent_indent=indent)
    return "\n".join(lines) + "\n"


HELP_TEXT = help_text()


class HelpScreen(ModalScreen[None]):
    """A modal page of help; any of escape, q or ? closes it."""

    BINDINGS = [
        Binding("escape,q,question_mark", "dismiss", "close"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(Text(HELP_TEXT))

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
