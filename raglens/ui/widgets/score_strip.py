"""The score strip: every window's score for the query on a fixed axis, the noise band, and findings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from raglens.printable import printable
from raglens.ui.widgets.fitted_text import FittedText

if TYPE_CHECKING:  # numpy-backed values; they arrive from the ranking worker
    from raglens.diagnostics.query_report import QueryDiagnostics
    from raglens.diagnostics.score_profile import ScoreProfile
    from raglens.search import Hit


LEGEND = "  ~ noise  k k-th  ▲ top"
COMPACT_BELOW = 60
"""Columns under which the score and noise lines take their short forms (80x24 gives the strip 37)."""


def strip_text(
    diagnostics: QueryDiagnostics,
    hits: tuple[Hit, ...],
    k: int,
    *,
    width: int | None = None,
    versus: ScoreProfile | None = None,
) -> Text:
    """The histogram with its marks, one line on the scores and noise, then straddles and identity.

    The marks' legend follows them only where it fits beside them in ``width`` columns: wrapped onto
    a line of its own it would push the findings below out of the strip (the help explains it).
    ``versus`` is configuration B's distribution for the same question, drawn under A's on the same
    axis (in magenta, as B is everywhere).
    """
    from raglens.diagnostics.describe import (
        SCALE_LABELS,
        describe_noise,
        describe_profile,
        distribution_line,
        marker_line,
    )

    low, high = SCALE_LABELS
    text = Text(no_wrap=False)
    text.append(f"{low} ", style="dim")
    text.append(distribution_line(diagnostics.profile), style="cyan")
    text.append(f" {high}", style="dim")
    indent = " " * (len(low) + 1)
    marks = marker_line(diagnostics.profile, diagnostics.noise)
    text.append("\n" + indent)
    text.append(marks, style="magenta")
    if width is None or len(indent) + len(marks) + len(LEGEND) <= width:
        text.append(LEGEND, style="dim")
    if versus is not None:
        text.append("\n" + "B".ljust(len(indent)), style="bold magenta")
        text.append(distribution_line(versus), style="magenta")
        text.append("\n" + indent)
        text.append(marker_line(versus, None), style="magenta")
    compact = width is not None and width < COMPACT_BELOW  # a narrow pane: the findings need the room
    text.append("\n" + describe_profile(diagnostics.profile, k, compact=compact), style="dim")
    text.append("\n" + describe_noise(diagnostics.noise, hits, compact=compact), style="dim")
    for straddle in diagnostics.straddles[:2]:
        text.append("\n" + printable("straddle: " + straddle.describe()), style="yellow")
    for expected in diagnostics.expected:
        found = expected.rank is not None and expected.rank <= k
        text.append("\n" + printable(expected.describe(k)), style="bold green" if found else "bold red")
    if diagnostics.identifier is not None:
        text.append("\n" + printable("literal: " + diagnostics.identifier.describe()), style="yellow")
    return text


StripContent = tuple["QueryDiagnostics", tuple["Hit", ...], int]


class ScoreStrip(FittedText[StripContent]):
    """Above the hits: how the whole corpus scored for the query, so a hit can be judged against it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._versus: ScoreProfile | None = None

    def show_versus(self, profile: ScoreProfile | None) -> None:
        """Draw configuration B's distribution for the same question under A's (None: no B)."""
        self._versus = profile
        self.refresh(layout=True)

    def show_diagnostics(self, diagnostics: QueryDiagnostics, hits: tuple[Hit, ...], k: int) -> None:
        self.present((diagnostics, hits, k))

    @property
    def settled(self) -> bool:
        """The strip has been laid out with a width, so its text is the one for that width."""
        return self.source is None or self.size.width > 0

    def text_for(self, width: int | None) -> Text:
        if self.source is None:
            return Text()
        return strip_text(*self.source, width=width, versus=self._versus)
