"""Human output of the headless commands, drawn with Rich; file content is always shown as inert text."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from raglens.attribution import Attribution
from raglens.cli.explain_output import explanation_lines
from raglens.cli.lab_render import diagnostics_renderable
from raglens.corpus import Corpus
from raglens.diagnostics.coverage import CorpusCoverage
from raglens.diagnostics.describe import describe_coverage, describe_lexical, noise_mark
from raglens.diagnostics.query_report import QueryDiagnostics
from raglens.display import excerpt, similarity_bar
from raglens.embedding_events import EngineInfo
from raglens.model_languages import ModelLanguages
from raglens.printable import printable, printable_name
from raglens.search import SearchResult
from raglens.windows import WindowParams


def search_header(
    query: str,
    k: int,
    params: WindowParams,
    engine: EngineInfo,
    result: SearchResult,
    file_count: int,
    languages: ModelLanguages | None = None,
) -> Text:
    """The question, then the engine (and the languages its model reads, where known), the settings
    and how much was ranked."""
    header = Text()
    header.append("query ", style="dim")
    header.append(printable(query), style="bold")
    reads = f" · reads {languages.describe()}" if languages is not None else ""
    ranked = f"ranked {result.ranked_count:,} of {result.window_count:,} windows in {file_count:,} files"
    if not result.cosine:  # BM25 scores every window; it retrieves only those that share a word
        ranked = (
            f"scored {result.window_count:,} windows in {file_count:,} files, "
            f"{result.ranked_count:,} share a word with the query"
        )
    header.append(f"\n{engine.describe()}{reads} · k={k} · {params.describe()} · {ranked}", style="dim")
    return header


def hits_renderable(
    result: SearchResult,
    corpus: Corpus,
    max_lines: int,
    diagnostics: QueryDiagnostics | None = None,
    explanations: Sequence[Attribution] | None = None,
    query: str = "",
) -> RenderableType:
    """Each hit: rank, score, bar, citation and marks, then the first lines of its raw text, then
    (with ``explanations``) why it scored what it did."""
    parts: list[RenderableType] = []
    for position, hit in enumerate(result.hits):
        line = Text()
        line.append(f"{hit.rank:>3}  ", style="bold")
        line.append(f"{hit.score:.3f} ", style="bold cyan")
        line.append(similarity_bar(result.bar_fraction(hit.score)), style="cyan")
        line.append("  ")
        line.append(printable_name(hit.window.citation), style="green")
        if corpus.changed_on_disk(hit.window.path):
            line.append("  changed on disk since it was read", style="bold yellow")
        if diagnostics is not None:
            mark = noise_mark(diagnostics.noise_verdict(hit.score))
            if mark:
                line.append(f"  {mark}", style="magenta" if mark == "within noise" else "yellow")
            mark = describe_lexical(diagnostics.lexical[position])
            if mark:
                line.append(printable(f"  ≡ {mark}"), style="yellow")
        parts.append(line)
        shown, hidden = excerpt(hit.window.text_in(corpus.file(hit.window.path).text), max_lines)
        for text_line in shown:
            parts.append(Text.assemble(("     │ ", "dim"), text_line, no_wrap=True, overflow="ellipsis"))
        if hidden:
            parts.append(Text(f"     │ … {hidden} more line(s)", style="dim"))
        if explanations is not None:
            window_text = hit.window.text_in(corpus.file(hit.window.path).text)
            for why in explanation_lines(explanations[position], hit.score, query, window_text):
                parts.append(Text.assemble("     ", why))
        parts.append(Text(""))
    return Group(*parts)


def print_search(
    console: Console,
    *,
    query: str,
    k: int,
    params: WindowParams,
    engine: EngineInfo,
    corpus: Corpus,
    result: SearchResult,
    max_lines: int,
    diagnostics: QueryDiagnostics | None = None,
    languages: ModelLanguages | None = None,
    explanations: Sequence[Attribution] | None = None,
) -> None:
    console.print(search_header(query, k, params, engine, result, len(corpus.files), languages))
    if diagnostics is not None and diagnostics.language is not None and diagnostics.unread_language:
        console.print(
            Text(
                f"{diagnostics.language.describe()}: its scores do not measure meaning, so no noise "
                "verdict is given",
                style="bold yellow",
            )
        )
    console.print()
    console.print(hits_renderable(result, corpus, max_lines, diagnostics, explanations, query))
    if not result.cosine:
        console.print(
            Text(
                "BM25 scores have no fixed scale: bars are drawn against the top score; the score "
                "histogram and the noise floor, which read cosines, do not apply",
                style="dim",
            )
        )
    if diagnostics is not None:
        console.print(diagnostics_renderable(diagnostics, result.hits, k, cosine=result.cosine))


def coverage_summary(coverage: CorpusCoverage) -> Text:
    """One paragraph: how many windows the model truncates, what it never reads, what size would fit."""
    limit = "" if coverage.token_limit is None else f" ({coverage.token_limit} tokens of text a window)"
    return Text(describe_coverage(coverage) + limit, style="yellow")


def print_files(
    console: Console,
    corpus: Corpus,
    params: WindowParams,
    window_counts: dict[str, int],
    coverage: CorpusCoverage | None = None,
) -> None:
    """The indexed files with their window counts and unread share, then every skipped file and why."""
    total = sum(window_counts.values())
    console.print(
        Text(
            f"{printable_name(str(corpus.root))} · {corpus.listing} listing · {len(corpus.files)} file(s), "
            f"{total} window(s) of {params.describe()} · {len(corpus.skipped)} skipped",
            style="bold",
        )
    )
    if coverage is not None:
        console.print(coverage_summary(coverage))
    if corpus.files:
        table = Table(box=None, pad_edge=False, show_edge=False)
        table.add_column("windows", justify="right")
        table.add_column("bytes", justify="right")
        if coverage is not None:
            table.add_column("unread", justify="right")
        table.add_column("path")
        table.add_column("note", style="yellow")
        for source in corpus.files:
            row: list[RenderableType] = [str(window_counts[source.path]), f"{source.size_bytes:,}"]
            entry = coverage.file(source.path) if coverage is not None else None
            if coverage is not None:
                row.append(f"{entry.unread_share:.0%}" if entry is not None else "")
            row += [Text(printable_name(source.path)), Text(printable(source.decoding_note))]
            table.add_row(*row)
        console.print(table)
    if corpus.skipped:
        console.print(Text("\nskipped", style="bold"))
        skipped = Table(box=None, pad_edge=False, show_edge=False, show_header=False)
        skipped.add_column("reason", style="dim")
        skipped.add_column("path", style="dim")
        skipped.add_column("detail", style="dim")
        for entry_skipped in corpus.skipped:
            skipped.add_row(
                entry_skipped.reason.value,
                Text(printable_name(entry_skipped.path)),
                Text(printable_name(entry_skipped.detail)),
            )
        console.print(skipped)
