"""The instruments' findings as short plain sentences and marker lines, shared by the CLI and the app."""

from __future__ import annotations

from collections.abc import Sequence

from raglens.diagnostics.coverage import CorpusCoverage
from raglens.diagnostics.lexical import LexicalMatch
from raglens.diagnostics.noise_floor import NoiseFloor, NoiseVerdict
from raglens.diagnostics.probes import ProbeResult
from raglens.diagnostics.query_report import QueryDiagnostics
from raglens.diagnostics.score_profile import BIN_COUNT, BIN_FLOOR, BIN_WIDTH, ScoreProfile, bin_of, sparkline
from raglens.search import Hit

SCALE_LABELS = (f"{BIN_FLOOR:.2f}", f"{BIN_FLOOR + BIN_COUNT * BIN_WIDTH:.2f}")
"""The ends of the fixed score axis every distribution is drawn on."""


def distribution_line(profile: ScoreProfile) -> str:
    """The histogram of every window's score on the fixed axis, as block characters."""
    return sparkline(profile.counts)


def marker_line(profile: ScoreProfile, noise: NoiseFloor | None) -> str:
    """Under the histogram: ``~`` for the noise band (its lowest control to the undecided band), ``?``
    for the undecided band around its edge, ``k`` at the k-th score, ``▲`` at the top."""
    marks = [" "] * BIN_COUNT
    if noise is not None:
        undecided_low, undecided_high = noise.undecided_band
        for position in range(bin_of(min(noise.low, undecided_low)), bin_of(undecided_low)):
            marks[position] = "~"
        for position in range(bin_of(undecided_low), bin_of(undecided_high) + 1):
            marks[position] = "?"
    marks[bin_of(profile.kth_score)] = "k"
    marks[bin_of(profile.top_score)] = "▲"
    return "".join(marks)


def describe_profile(profile: ScoreProfile, k: int, *, compact: bool = False) -> str:
    """E.g. ``top 0.63, 4.1 sd above the mean 0.12; #5 0.45, #6 0.44 (gap 0.010)``.

    ``compact`` (a narrow pane): ``top 0.630 (4.1 sd) · #5 0.450 · gap 0.010``.
    """
    if profile.ranked_count == 0:
        return "no window is embedded yet"
    shown = min(k, profile.ranked_count)
    if compact:
        gap = f" · gap {profile.gap:.3f}" if profile.gap is not None else ""
        return f"top {profile.top_score:.3f} ({profile.top_z:.1f} sd) · #{shown} {profile.kth_score:.3f}{gap}"
    text = (
        f"{profile.ranked_count:,} windows scored: top {profile.top_score:.3f}, {profile.top_z:.1f} sd "
        f"above the mean {profile.mean:.3f}"
    )
    text += f"; #{shown} {profile.kth_score:.3f}"
    if profile.next_score is not None and profile.gap is not None:
        text += f", #{shown + 1} {profile.next_score:.3f} (gap {profile.gap:.3f})"
    return text


def noise_mark(verdict: NoiseVerdict | None) -> str:
    """A hit's mark: ``within noise`` or ``undecided``; nothing above the band or when not judged."""
    return "" if verdict in (None, NoiseVerdict.ABOVE) else verdict.value


def describe_noise(diagnostics: QueryDiagnostics, hits: Sequence[Hit], *, compact: bool = False) -> str:
    """How many hits stand above the noise band, how many are undecided, and the band itself.

    A question in a language the model does not read gets no verdict: its scores are coincidences
    of shared tokens, and "likely unanswerable" would be as wrong as "answered".
    """
    noise = diagnostics.noise
    if diagnostics.language is not None and diagnostics.unread_language:
        return f"no noise verdict: {diagnostics.language.describe()}"
    if noise is None:
        return "noise floor: not measured yet"
    verdicts = [noise.verdict(hit.score) for hit in hits]
    above = verdicts.count(NoiseVerdict.ABOVE)
    undecided = verdicts.count(NoiseVerdict.UNDECIDED)
    if above == 0 and undecided == 0:
        verdict = (
            "none above: likely unanswerable"
            if compact
            else ("none stands above noise: this looks like a question the corpus cannot answer")
        )
    elif above == 0:
        verdict = f"none clearly above, {undecided} undecided" + (
            "" if compact else ": too near the band to tell an answer from noise"
        )
    else:
        verdict = f"{above} of {len(hits)} above" + (f", {undecided} undecided" if undecided else "")
    if compact:
        return f"noise {noise.edge:.3f}±{noise.spread:.3f}: {verdict}"
    return f"{noise.describe_band()}: {verdict}"


def describe_lexical(match: LexicalMatch) -> str:
    """A hit's literal mark: ``quotes the query`` and/or ``contains name``; empty for none."""
    parts = []
    if match.quotes_query:
        parts.append("quotes the query")
    if match.identifiers:
        parts.append("contains " + ", ".join(match.identifiers))
    return "; ".join(parts)


def probe_report_lines(results: Sequence[ProbeResult]) -> list[tuple[str, str]]:
    """Each probe as (Rich style, line) pairs: a bold numbered heading, its explanation, any warning
    in yellow; the CLI and the failure-lab screen print them alike."""
    lines: list[tuple[str, str]] = []
    for position, result in enumerate(results, start=1):
        lines.append(("bold", f"{position}. {result.name}"))
        lines.extend(("", f"   {line}") for line in result.explanation)
        if result.warning:
            lines.append(("yellow", f"   warning: {result.warning}"))
        lines.append(("", ""))
    return lines


def describe_coverage(coverage: CorpusCoverage) -> str:
    """How many windows the model cuts short, what no window reads, and a size that would fit."""
    if coverage.truncated_count == 0:
        return f"the model reads all {coverage.window_count:,} windows whole"
    text = (
        f"the model cuts {coverage.truncated_count:,} of {coverage.window_count:,} windows "
        f"({coverage.truncated_share:.0%}) short, and {coverage.unread_characters:,} characters "
        f"({coverage.unread_share:.1%}) are read by no window"
    )
    if coverage.suggested_size is not None:
        text += f"; windows of about {coverage.suggested_size} characters would fit it"
    return text
