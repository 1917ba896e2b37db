"""``raglens search … --vs SPEC``: configuration B's ranking of the same query beside A's."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from raglens.cli.documents import model_document, parameters_document, window_document
from raglens.cli.narration import Narrator
from raglens.cli.searching import PreparedIndex, engine_header, prepare_index
from raglens.cli.settings import check_model_path
from raglens.compare import Comparison, ExpectedMove, compare, expected_moves
from raglens.configuration import RetrievalConfig, parse_vs
from raglens.diagnostics.golden import ExpectedRef
from raglens.diagnostics.symbols import Definition
from raglens.display import similarity_bar
from raglens.printable import printable_name
from raglens.run import EngineSettings
from raglens.search import SearchResult

BAR_WIDTH = 10


def config_b(args: argparse.Namespace, a: RetrievalConfig) -> RetrievalConfig | None:
    """B from ``--vs`` (what it does not name is A's), checked before anything loads; None without it."""
    spec = getattr(args, "vs", None)
    if spec is None:
        return None
    b = parse_vs(spec, a)
    check_model_path(b, getattr(args, "embedder_factory", None))
    return b


@dataclass(frozen=True)
class Versus:
    """B's side of a comparison: its configuration, index and ranking, and how the hits moved."""

    config: RetrievalConfig
    prepared: PreparedIndex
    result: SearchResult
    comparison: Comparison
    expected: tuple[ExpectedMove, ...] = ()


def rank_versus(
    args: argparse.Namespace,
    b: RetrievalConfig,
    settings: EngineSettings,
    a_prepared: PreparedIndex,
    a_result: SearchResult,
    expected: Mapping[ExpectedRef, Sequence[Definition]] | None,
    narrator: Narrator,
    stderr: Console,
) -> Versus:
    """Index A's corpus as B (with A's engine settings), rank the query, and follow every hit across."""
    narrator.say(f"configuration B: {b.describe()}")
    prepared = prepare_index(b, settings, a_prepared.corpus, narrator, stderr)
    result = prepared.retriever.search(args.query, args.k)
    a_windows, b_windows = a_prepared.retriever.windows, prepared.retriever.windows
    comparison = compare(a_result, a_windows, result, b_windows, args.k)
    moves = expected_moves(a_result, a_windows, result, b_windows, expected) if expected else ()
    return Versus(b, prepared, result, comparison, moves)


def versus_document(args: argparse.Namespace, versus: Versus, a_hits: list[dict[str, Any]]) -> dict[str, Any]:
    """``"vs"`` for the search document (B in A's schema); also marks A's hits with their rank in B."""
    k = args.k
    for hit, movement in zip(a_hits, versus.comparison.a, strict=True):
        hit["rank_in_other"] = movement.rank_in_other
        hit["movement"] = movement.describe(k, side="a")
    corpus = versus.prepared.corpus
    hits = [
        {
            "rank": hit.rank,
            "score": hit.score,
            **window_document(hit.window, corpus.file(hit.window.path).text),
            "rank_in_other": movement.rank_in_other,
            "movement": movement.describe(k, side="b"),
        }
        for hit, movement in zip(versus.result.hits, versus.comparison.b, strict=True)
    ]
    return {
        "parameters": parameters_document(versus.config.params, args.max_file_bytes),
        "model": model_document(versus.prepared.engine),
        "window_count": versus.result.window_count,
        "shared_in_top_k": versus.comparison.shared,
        "expected": [
            {"ref": str(move.ref), "rank_a": move.rank_a, "rank_b": move.rank_b} for move in versus.expected
        ],
        "hits": hits,
    }


def print_versus(
    console: Console, args: argparse.Namespace, a: RetrievalConfig, a_result: SearchResult, versus: Versus
) -> None:
    """A and B side by side: each hit's score (cosines on the same 0-1 scale; BM25's against its top
    score, as they have no fixed scale), citation and movement."""
    k = args.k
    console.print()
    console.print(Text(f"A  {a.describe()}", style="bold"))
    console.print(
        Text(f"B  {versus.config.describe()}  ({engine_header(versus.prepared.engine)})", style="bold")
    )
    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in ("#", "A", "", "A→B", "B", "", "A→B"):
        table.add_column(column, no_wrap=column != "")
    rows = max(len(a_result.hits), len(versus.result.hits))
    for index in range(rows):
        cells: list[Text | str] = [str(index + 1)]
        for result, movements, side in (
            (a_result, versus.comparison.a, "a"),
            (versus.result, versus.comparison.b, "b"),
        ):
            hits = result.hits
            if index < len(hits):
                hit = hits[index]
                score = Text(f"{hit.score:.3f} ", style="bold cyan")
                score.append(similarity_bar(result.bar_fraction(hit.score), BAR_WIDTH), style="cyan")
                cells += [
                    score,
                    Text(printable_name(hit.window.citation), style="green"),
                    movements[index].describe(k, side=side),
                ]
            else:
                cells += ["", "", ""]
        table.add_row(*cells)
    console.print(table)
    shared = versus.comparison.shared
    console.print(
        Text(
            f"top-{k} overlap: {shared} of A's {len(a_result.hits)} hits have their text in B's top {k} "
            "(a hit is followed by its characters, since the windows may differ)",
            style="dim",
        )
    )
    if not (a_result.cosine and versus.result.cosine):
        console.print(
            Text("BM25's bars are drawn against its top score: its scores are not cosines", style="dim")
        )
    for move in versus.expected:
        console.print(Text(move.describe(), style="bold"))
