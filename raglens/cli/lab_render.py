"""Human output of the diagnostics: per-query instruments, the prompt, probes and evaluation reports."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from raglens.diagnostics.describe import (
    SCALE_LABELS,
    describe_noise,
    describe_profile,
    distribution_line,
    marker_line,
    probe_report_lines,
)
from raglens.diagnostics.evaluation import EvalReport
from raglens.diagnostics.probes import ProbeResult
from raglens.diagnostics.prompt import PromptPreview
from raglens.diagnostics.query_report import QueryDiagnostics
from raglens.printable import printable, printable_name
from raglens.search import Hit


def diagnostics_renderable(
    diagnostics: QueryDiagnostics, hits: tuple[Hit, ...], k: int, *, cosine: bool = True
) -> RenderableType:
    """The score distribution with its marks, the noise floor, straddles and the identifier view.

    Not ``cosine`` (BM25): no histogram on the cosine scale and no noise floor, only the spread.
    """
    low, high = SCALE_LABELS
    indent = " " * (len(low) + 1)
    parts: list[RenderableType] = []
    if cosine:
        parts += [
            Text.assemble(
                ("scores ", "bold"),
                (f"{low} ", "dim"),
                (distribution_line(diagnostics.profile), "cyan"),
                (f" {high}", "dim"),
            ),
            Text.assemble(
                "       ",
                indent,
                (marker_line(diagnostics.profile, diagnostics.noise), "magenta"),
                ("  ~ noise  ? undecided  k k-th hit  ▲ top", "dim"),
            ),
        ]
    parts.append(Text(describe_profile(diagnostics.profile, k), style="dim"))
    if cosine:
        parts.append(Text(describe_noise(diagnostics, hits), style="dim"))
    for straddle in diagnostics.straddles:
        parts.append(Text(printable("straddle: " + straddle.describe()), style="yellow"))
    for expected in diagnostics.expected:
        found = expected.rank is not None and expected.rank <= k
        parts.append(Text(expected.describe(k), style="bold green" if found else "bold red"))
    if diagnostics.identifier is not None:
        parts.append(Text(printable("literal: " + diagnostics.identifier.describe()), style="yellow"))
        for occurrence in diagnostics.identifier.occurrences[:10]:
            parts.append(Text(printable_name(f"  {occurrence.location}"), style="green"))
    return Group(*parts)


def print_prompt(console: Console, prompt: PromptPreview) -> None:
    """The exact prompt text, inert, under a header with its size."""
    tokens = f"{prompt.token_count:,} tokens" if prompt.token_count is not None else "tokens not counted"
    console.print(
        Text(
            f"\nprompt: {prompt.context_count} window(s), {len(prompt.text):,} characters, {tokens} "
            "(with the embedding model's tokenizer; an LLM's own counts differ a little)",
            style="bold",
        )
    )
    for line in printable(prompt.text).split("\n"):
        console.print(Text.assemble(("│ ", "dim"), line), soft_wrap=True)


def print_probes(console: Console, results: list[ProbeResult]) -> None:
    """Each probe: its name, its explanation, and any warning."""
    for style, line in probe_report_lines(results):
        console.print(Text(printable(line), style=style), soft_wrap=True)


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def print_eval(console: Console, report: EvalReport) -> None:
    """Recall@k and MRR overall and per kind, the misses, calibration and abstention."""
    mrr = "n/a" if report.mrr is None else f"{report.mrr:.3f}"
    ndcg = "n/a" if report.ndcg is None else f"{report.ndcg:.3f}"
    console.print(
        Text(
            f"{len(report.results)} case(s), {len(report.positives)} answerable: recall@{report.k} "
            f"{_share(report.recall)}, MRR {mrr}, nDCG@{report.k} {ndcg}",
            style="bold",
        )
    )
    characters = report.characters
    if characters.span_cases:
        console.print(
            f"characters, over the {characters.span_cases} case(s) whose answer is a symbol or lines: "
            f"{_share(characters.recall)} of the answer is in the top {report.k} (recall); "
            f"{_share(characters.precision)} of the top {report.k} is the answer (precision); "
            f"IoU {_share(characters.iou)}",
            markup=False,
        )
    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in ("kind", "cases", "met", f"recall@{report.k}", "MRR", f"nDCG@{report.k}", "abstained"):
        table.add_column(column, justify="left" if column == "kind" else "right")
    for kind in report.kinds:
        found = f"{kind.found}/{kind.positives}" if kind.positives else "-"
        mrr_kind = f"{kind.mrr:.3f}" if kind.mrr is not None else "-"
        abstained = (
            f"{kind.abstained}/{kind.negatives}" if kind.negatives and kind.abstained is not None else "-"
        )
        ndcg_kind = f"{kind.ndcg:.3f}" if kind.ndcg is not None else "-"
        table.add_row(
            Text(printable_name(kind.kind)),
            str(kind.cases),
            found,
            _share(kind.recall),
            mrr_kind,
            ndcg_kind,
            abstained,
        )
    console.print(table)
    if report.misses:
        console.print(Text("\nmisses", style="bold"))
        for miss in report.misses:
            ranks = ", ".join(
                f"{ref} at rank {rank}" if rank is not None else f"{ref} nowhere"
                for ref, rank in zip(miss.case.expect, miss.ref_ranks, strict=True)
            )
            console.print(
                Text(printable_name(f"  line {miss.case.line}: {miss.case.query!r}"), style="yellow"),
                soft_wrap=True,
            )
            console.print(Text(printable_name(f"    expected ({miss.case.mode}) {ranks}")), soft_wrap=True)
            top = ", ".join(f"{hit.citation} {hit.score:.3f}" for hit in miss.hits[:3])
            console.print(Text(printable_name(f"    got {top}"), style="dim"), soft_wrap=True)
    calibration = report.calibration
    console.print(Text("\ncalibration", style="bold"))
    console.print(
        f"  lowest top score of a found answer {_score(calibration.lowest_found_top)}; "
        f"highest top score of a negative {_score(calibration.highest_negative_top)}",
        markup=False,
    )
    if calibration.separable is None:
        console.print('  add negatives ("expect": []) and positives to suggest a floor', markup=False)
    else:
        if calibration.separable:
            advice = (
                "  separable: every found answer tops above every negative; suggested floor "
                f"{_score(calibration.suggested_floor)} (abstain below it)"
            )
        else:
            advice = (
                "  overlapping: no floor keeps every found answer and refuses every negative; suggested "
                f"floor {_score(calibration.suggested_floor)} (abstain below), and answer with a note "
                f"that the evidence is weak up to {_score(calibration.suggested_note)}"
            )
        console.print(advice, markup=False)
    abstention = report.abstention
    if abstention is not None:
        floor = "at the suggested floor" if abstention.suggested else "with --floor"
        console.print(
            f"  {floor} {abstention.floor:.3f}: abstains on "
            f"{abstention.abstained}/{abstention.negatives} "
            f"negatives ({_share(abstention.abstain_rate)}) and wrongly on {abstention.false_weak}/"
            f"{abstention.positives} answerable questions ({_share(abstention.false_weak_rate)} false-weak)",
            markup=False,
        )
