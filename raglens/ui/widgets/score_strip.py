"""The score strip: every window's score for the query on a fixed axis, the noise band, and findings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from raglens.printable import printable

if TYPE_CHECKING:  # numpy-backed values; they arrive from the ranking worker
    from raglens.diagnostics.query_report import QueryDiagnostics
    from raglens.search import Hit


def strip_text(diagnostics: QueryDiagnostics, hits: tuple[Hit, ...], k: int) -> Text:
    """The histogram with its marks, one line on the scores and noise, then straddles and identity."""
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
    text.append("\n" + " " * (len(low) + 1))
    text.append(marker_line(diagnostics.profile, diagnostics.noise), style="magenta")
    text.append("  ~ noise  k k-th  ▲ top", style="dim")
    text.append("\n" + describe_profile(diagnostics.profile, k), style="dim")
    text.append("\n" + describe_noise(diagnostics.noise, hits), style="dim")
    for straddle in diagnostics.straddles[:2]:
        text.append("\n" + printable("straddle: " + straddle.describe()), style="yellow")
    for expected in diagnostics.expected:
        found = expected.rank is not None and expected.rank <= k
        text.append("\n" + printable(expected.describe(k)), style="bold green" if found else "bold red")
    if diagnostics.identifier is not None:
        text.append("\n" + printable("literal: " + diagnostics.identifier.describe()), style="yellow")
    return text


class ScoreStrip(Static):
    """Above the hits: how the whole corpus scored for the query, so a hit can be judged against it."""

    def show_diagnostics(self, diagnostics: QueryDiagnostics, hits: tuple[Hit, ...], k: int) -> None:
        self.update(strip_text(diagnostics, hits, k))
        self.display = True

    def clear(self) -> None:
        self.update("")
        self.display = False
