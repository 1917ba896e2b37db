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


LEGENDS = ("  ~ noise ? undecided k k-th ▲ top", "  ~noise ?undecided", "  ?undecided")
"""The marks' legend, longest first: the first that fits beside them is drawn."""
UNFOLD_HINT = "(i)"
"""After a finding cut to one line: the key that shows it whole."""
COMPACT_BELOW = 60
"""Columns under which the score and noise lines take their short forms (80x24 gives the strip 37)."""


def strip_text(
    diagnostics: QueryDiagnostics,
    hits: tuple[Hit, ...],
    k: int,
    *,
    width: int | None = None,
    versus: ScoreProfile | None = None,
    pins_elsewhere: str | None = None,
    unfolded: bool = False,
    cosine: bool = True,
) -> Text:
    """The histogram with its marks, one line on the scores and noise, then straddles and identity.

    The marks' legend follows them only where it fits beside them in ``width`` columns: wrapped onto
    a line of its own it would push the findings below out of the strip (the help explains it).
    ``versus`` is configuration B's distribution for the same question, drawn under A's on the same
    axis (in magenta, as B is everywhere). ``pins_elsewhere`` is the question the pins were made for,
    when it is not this one: they are not ranked here, and the strip says whose they are. In a pane
    under COMPACT_BELOW columns each finding takes one line, cut with "…", unless ``unfolded`` (i):
    at 80x24 wrapped findings took 9-12 rows and left one hit in view. Scores that are not ``cosine``
    (BM25) have no fixed axis: no histogram, no noise band, one line saying so, then the findings.
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
    if not cosine:
        text.append(LEXICAL_SCALE_COMPACT if width is not None and width < COMPACT_BELOW else LEXICAL_SCALE)
        text.stylize("dim")
        _append_findings(text, _findings(diagnostics, k, pins_elsewhere), width, unfolded)
        return text
    text.append(f"{low} ", style="dim")
    text.append(distribution_line(diagnostics.profile), style="cyan")
    text.append(f" {high}", style="dim")
    indent = " " * (len(low) + 1)
    marks = marker_line(diagnostics.profile, diagnostics.noise)
    text.append("\n" + indent)
    text.append(marks, style="magenta")
    legend = next(
        (words for words in LEGENDS if width is None or len(indent) + len(marks) + len(words) <= width), ""
    )
    text.append(legend, style="dim")
    if versus is not None:
        text.append("\n" + "B".ljust(len(indent)), style="bold magenta")
        text.append(distribution_line(versus), style="magenta")
        text.append("\n" + indent)
        text.append(marker_line(versus, None), style="magenta")
    compact = width is not None and width < COMPACT_BELOW  # a narrow pane: the findings need the room
    findings: list[tuple[str, str]] = [
        (describe_profile(diagnostics.profile, k, compact=compact), "dim"),
        (
            describe_noise(diagnostics, hits, compact=compact),
            "yellow" if diagnostics.unread_language else "dim",
        ),
    ]
    _append_findings(text, findings + _findings(diagnostics, k, pins_elsewhere), width, unfolded)
    return text


LEXICAL_SCALE = "BM25 scores have no fixed scale: bars run to the top score; no histogram, no noise band"
LEXICAL_SCALE_COMPACT = "BM25: no fixed scale, no noise band"


def _findings(diagnostics: QueryDiagnostics, k: int, pins_elsewhere: str | None) -> list[tuple[str, str]]:
    """The findings of any ranking, dense or lexical: straddles, pinned answers, a literal identifier."""
    findings = [(printable("straddle: " + s.describe()), "yellow") for s in diagnostics.straddles[:2]]
    for expected in diagnostics.expected:
        found = expected.rank is not None and expected.rank <= k
        findings.append((printable(expected.describe(k)), "bold green" if found else "bold red"))
    if pins_elsewhere is not None:
        findings.append((printable(f"pinned for: {pins_elsewhere!r}, not this question (u unpins)"), "dim"))
    if diagnostics.identifier is not None:
        findings.append((printable("literal: " + diagnostics.identifier.describe()), "yellow"))
    return findings


def _append_findings(text: Text, findings: list[tuple[str, str]], width: int | None, unfolded: bool) -> None:
    """One finding a line; in a pane under COMPACT_BELOW columns each is cut to one line unless
    ``unfolded``."""
    folded = width is not None and width < COMPACT_BELOW and not unfolded
    for line, style in findings:
        finding = Text(line, style=style)
        if folded and width is not None and finding.cell_len > width:
            finding.truncate(max(width - len(UNFOLD_HINT), 1), overflow="ellipsis")  # one line each
            finding.append(UNFOLD_HINT, style="dim")
        text.append("\n")
        text.append_text(finding)


StripContent = tuple["QueryDiagnostics", tuple["Hit", ...], int, bool]
"""What the strip draws: the diagnostics, the hits, k, and whether the scores are cosines."""


class ScoreStrip(FittedText[StripContent]):
    """Above the hits: how the whole corpus scored for the query, so a hit can be judged against it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._versus: ScoreProfile | None = None
        self._pins_elsewhere: str | None = None
        self.unfolded = False
        """Whether the findings are shown whole in a narrow pane (i), not one line each."""

    def show_versus(self, profile: ScoreProfile | None) -> None:
        """Draw configuration B's distribution for the same question under A's (None: no B)."""
        self._versus = profile
        self.refresh(layout=True)

    @property
    def folds(self) -> bool:
        """Whether the strip is narrow enough to fold its findings to one line each."""
        return 0 < self.size.width < COMPACT_BELOW

    def toggle_unfolded(self) -> bool:
        """Show the findings whole, or one line each again; returns whether they are whole now."""
        self.unfolded = not self.unfolded
        self.refresh(layout=True)
        return self.unfolded

    def show_pins_elsewhere(self, question: str | None) -> None:
        """Say the pins belong to ``question``, not the one on screen (None: they are this one's)."""
        if question != self._pins_elsewhere:
            self._pins_elsewhere = question
            self.refresh(layout=True)

    def show_diagnostics(
        self, diagnostics: QueryDiagnostics, hits: tuple[Hit, ...], k: int, cosine: bool = True
    ) -> None:
        self.present((diagnostics, hits, k, cosine))

    @property
    def settled(self) -> bool:
        """The strip has been laid out with a width, so its text is the one for that width."""
        return self.source is None or self.size.width > 0

    def text_for(self, width: int | None) -> Text:
        if self.source is None:
            return Text()
        diagnostics, hits, k, cosine = self.source
        return strip_text(
            diagnostics,
            hits,
            k,
            cosine=cosine,
            width=width,
            versus=self._versus,
            pins_elsewhere=self._pins_elsewhere,
            unfolded=self.unfolded,
        )
