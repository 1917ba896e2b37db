"""Why this score (y): the window's text coloured by each token's share, the question's words, the split.

One panel per configuration (A, and B beside it while one is compared), each filled in when its
embedding process has taken the score apart.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from raglens.printable import printable

if TYPE_CHECKING:
    from raglens.attribution import Attribution, Explanation

COSINE_FULL_SHARE = 0.005
"""A token share drawn at full colour on the cosine scale: a 256-token window's strongest tokens carry
0.005-0.04 of its score, most carry under 0.002."""
STRONGEST = 8
WORD_SCALE = 4
"""The words listed sum their tokens and occurrences: drawn at full colour at this many times a token's."""


@dataclass(frozen=True)
class WhyPart:
    """One configuration's window whose score is taken apart, and (once it came) the taking apart."""

    label: str
    """``A · all-MiniLM-L6-v2 · 1000/200 chars``: which configuration."""
    citation: str
    shown: float | None
    """The score the hits show for this window; None when it is not ranked yet."""
    window_text: str
    chars_read: int | None
    """Characters of the window the model reads; None when not known yet (or BM25: all)."""
    cosine: bool
    attribution: Attribution | None = None
    """None until the process answers."""


def share_style(contribution: float, full: float) -> Style:
    """Green toward the question, magenta away from it, deeper the larger the share (absolute scale)."""
    depth = min(abs(contribution) / full, 1.0) if full > 0 else 0.0
    level = int(40 + 150 * depth)
    if contribution >= 0:
        return Style(bgcolor=f"rgb(0,{level},{level // 3})", color="white")
    return Style(bgcolor=f"rgb({level},0,{level})", color="white")


def _full_share(part: WhyPart, explanation: Explanation) -> float:
    """Full colour: a fixed share on the cosine scale; BM25's scores have none, so its strongest term."""
    if part.cosine:
        return COSINE_FULL_SHARE
    return max((abs(share.contribution) for share in explanation.query_tokens), default=0.0)


def legend(part: WhyPart, explanation: Explanation) -> Text:
    """What the colours mean, on which scale."""
    full = _full_share(part, explanation)
    scale = (
        f"full colour at ±{full:.3f} a token, ±{full * WORD_SCALE:.3f} a word"
        if part.cosine
        else "full colour at the strongest term"
    )
    return Text.assemble(
        (" toward the question ", share_style(full, full)),
        " ",
        (" away from it ", share_style(-full, full)),
        " ",
        ("not read", Style(strike=True, dim=True)),
        f"  ({scale})",
        (
            "\na share is a token's contextual vector's part of the score (it has read the whole text), "
            "not what deleting that word would do",
            "dim",
        )
        if part.cosine
        else "",
    )


def coloured_window(part: WhyPart, explanation: Explanation) -> Text:
    """The window's raw text, each token on its share's colour, the tail the model never read struck.

    Built segment by segment: making a segment printable may change its length (a CRLF, a control
    code), which would move every offset after it.
    """
    full = _full_share(part, explanation)
    text = part.window_text
    read = len(text) if part.chars_read is None else part.chars_read
    styles: dict[int, tuple[int, Style]] = {}
    for share in explanation.window_tokens:
        if share.start is None or share.end is None or share.end <= share.start:
            continue
        if share.start in styles and styles[share.start][0] <= share.end:
            continue  # the shorter token at a place is drawn: BM25's parts, not the compound over them
        styles[share.start] = (share.end, share_style(share.contribution, full))
    cuts = sorted({0, len(text), min(read, len(text)), *styles, *(end for end, _ in styles.values())})
    starts = sorted(styles)
    out = Text()
    for start, end in itertools.pairwise(cuts):
        style = Style()
        position = bisect.bisect_right(starts, start) - 1
        if position >= 0 and styles[starts[position]][0] >= end:
            style = styles[starts[position]][1]
        if start >= read:
            style = Style(strike=True, dim=True)
        out.append(printable(text[start:end]), style)
    return out


def part_renderable(part: WhyPart, question: str) -> Text:
    """One configuration's why: header, split, legend, question words, strongest words, window."""
    from raglens.attribution import (
        Unexplained,
        adds_nothing,
        describe_exactness,
        describe_share,
        describe_split,
        is_exact_for,
    )

    shown = "not ranked yet" if part.shown is None else f"{part.shown:.3f}"
    out = Text.assemble((part.label, "bold"), "\n", (printable(part.citation), "green"), f"  score {shown}\n")
    attribution = part.attribution
    if attribution is None:
        return out.append("taking the score apart…", style="dim")
    if isinstance(attribution, Unexplained):
        return out.append(attribution.reason, style="yellow")
    out.append(describe_split(attribution) + "\n", style="bold")
    exact = part.shown is not None and is_exact_for(attribution, part.shown)
    out.append(describe_exactness(attribution, part.shown) + "\n", style="dim" if exact else "yellow")
    out.append_text(legend(part, attribution))
    out.append("\n\nthe question's words: ")
    full = _full_share(part, attribution)
    for word in attribution.query_words(question):
        out.append(f"{printable(word.word)}", share_style(word.contribution, full * WORD_SCALE))
        out.append(describe_share(word, asked=True) + "  ", "dim" if adds_nothing(word) else "")
    out.append("\nstrongest in the window: ")
    for word in attribution.strongest_words(part.window_text, STRONGEST):
        out.append(f"{printable(word.word)}", share_style(word.contribution, full * WORD_SCALE))
        out.append(describe_share(word) + "  ")
    out.append("\n\n")
    out.append_text(coloured_window(part, attribution))
    return out


class WhyScreen(ModalScreen[None]):
    """The why of one window's score for the question on screen, per configuration; escape closes it."""

    BINDINGS = [Binding("escape,q,y", "close", "close")]

    def __init__(self, question: str, parts: list[WhyPart]) -> None:
        super().__init__()
        self.question = question
        self.parts = parts
        self._mounted = False
        """Whether the panels are mounted: an answer before that is drawn by on_mount."""

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="why-box"):
            yield Static(Text(f"why this score: {printable(self.question)}", style="bold"), id="why-title")
            with Horizontal(id="why-parts"):
                for position, part in enumerate(self.parts):
                    yield Static(
                        part_renderable(part, self.question), id=f"why-part-{position}", classes="why-part"
                    )

    def on_mount(self) -> None:
        """Draw what answered while the panels were being mounted."""
        self._mounted = True
        for position in range(len(self.parts)):
            self._draw(position)

    def show(self, position: int, attribution: Attribution | None) -> None:
        """Fill panel ``position`` with its configuration's answer (None: the process ended first).

        An answer may come before the panels are mounted: it is kept, and drawn once they are.
        """
        from raglens.attribution import Unexplained

        answer = attribution or Unexplained("the embedding process ended before it answered; ask again")
        self.parts[position] = replace(self.parts[position], attribution=answer)
        if self._mounted:
            self._draw(position)

    def _draw(self, position: int) -> None:
        self.query_one(f"#why-part-{position}", Static).update(
            part_renderable(self.parts[position], self.question)
        )

    def action_close(self) -> None:
        self.dismiss(None)
