"""Human output of the headless commands, drawn with Rich; file content is always shown as inert text."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from raglens.corpus import Corpus
from raglens.display import excerpt, similarity_bar
from raglens.embedding import Embedder
from raglens.printable import printable
from raglens.search import SearchResult
from raglens.windows import WindowParams


def search_header(
    query: str, k: int, params: WindowParams, embedder: Embedder, result: SearchResult, file_count: int
) -> Text:
    header = Text()
    header.append("query ", style="dim")
    header.append(printable(query), style="bold")
    header.append(
        f"\n{embedder.name} · k={k} · {params.describe()} · "
        f"ranked {result.ranked_count:,} of {result.window_count:,} windows in {file_count:,} files",
        style="dim",
    )
    return header


def hits_renderable(result: SearchResult, corpus: Corpus, max_lines: int) -> RenderableType:
    """Each hit: rank, score, bar and citation, then the first lines of its raw text."""
    parts: list[RenderableType] = []
    for hit in result.hits:
        line = Text()
        line.append(f"{hit.rank:>3}  ", style="bold")
        line.append(f"{hit.score:.3f} ", style="bold cyan")
        line.append(similarity_bar(hit.score), style="cyan")
        line.append("  ")
        line.append(printable(hit.window.citation), style="green")
        parts.append(line)
        shown, hidden = excerpt(hit.window.text_in(corpus.file(hit.window.path).text), max_lines)
        for text_line in shown:
            parts.append(Text.assemble(("     │ ", "dim"), text_line, no_wrap=True, overflow="ellipsis"))
        if hidden:
            parts.append(Text(f"     │ … {hidden} more line(s)", style="dim"))
        parts.append(Text(""))
    return Group(*parts)


def print_search(
    console: Console,
    *,
    query: str,
    k: int,
    params: WindowParams,
    embedder: Embedder,
    corpus: Corpus,
    result: SearchResult,
    max_lines: int,
) -> None:
    console.print(search_header(query, k, params, embedder, result, len(corpus.files)))
    console.print()
    console.print(hits_renderable(result, corpus, max_lines))


def print_files(
    console: Console, corpus: Corpus, params: WindowParams, window_counts: dict[str, int]
) -> None:
    """The indexed files with their window counts, then every skipped file with its reason."""
    total = sum(window_counts.values())
    console.print(
        Text(
            f"{printable(str(corpus.root))} · {corpus.listing} listing · {len(corpus.files)} file(s), "
            f"{total} window(s) of {params.describe()} · {len(corpus.skipped)} skipped",
            style="bold",
        )
    )
    if corpus.files:
        table = Table(box=None, pad_edge=False, show_edge=False)
        table.add_column("windows", justify="right")
        table.add_column("bytes", justify="right")
        table.add_column("path")
        table.add_column("note", style="yellow")
        for source in corpus.files:
            table.add_row(
                str(window_counts[source.path]),
                f"{source.size_bytes:,}",
                Text(printable(source.path)),
                Text(printable(source.decoding_note)),
            )
        console.print(table)
    if corpus.skipped:
        console.print(Text("\nskipped", style="bold"))
        skipped = Table(box=None, pad_edge=False, show_edge=False, show_header=False)
        skipped.add_column("reason", style="dim")
        skipped.add_column("path", style="dim")
        skipped.add_column("detail", style="dim")
        for entry in corpus.skipped:
            skipped.add_row(entry.reason.value, Text(printable(entry.path)), Text(printable(entry.detail)))
        console.print(skipped)
