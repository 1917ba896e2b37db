"""``raglens eval … --grid KEY=V1,V2``: the golden set over every combination, as a table and a chart."""

from __future__ import annotations

import argparse
import dataclasses
import io
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from raglens.cli.consoles import console_for
from raglens.cli.documents import model_document, parameters_document
from raglens.cli.evaluating import score_cases
from raglens.cli.lab_documents import eval_document
from raglens.cli.narration import Narrator
from raglens.cli.searching import PreparedIndex, prepare_index, read_corpus_named, windows_to_embed
from raglens.cli.settings import engine_settings
from raglens.configuration import GridAxis, RetrievalConfig, is_bm25
from raglens.corpus import Corpus
from raglens.diagnostics.case_comparison import Change, compare_cases, rank_label
from raglens.diagnostics.coverage import measure_coverage
from raglens.diagnostics.evaluation import CaseResult, resolve_refs, summarise
from raglens.diagnostics.golden import GoldenCase
from raglens.diagnostics.grid import (
    GridRow,
    best_row,
    chart_series,
    not_found_message,
    nothing_found,
    row_label,
    settings_of,
    shown_value,
    varied_keys,
)
from raglens.diagnostics.grid_pace import EmbeddingPace, RowToEmbed, seconds_left
from raglens.display import duration
from raglens.embedding_events import DEFAULT_MODEL_NAME
from raglens.fingerprint import max_seq_length_of, model_folder
from raglens.grid_events import GridCase, GridEvent, GridRowDone, GridStarted, RowFigures, encode
from raglens.pipeline_steps import IndexTaken, PipelineStep, VectorsFromCache, WindowsCut, WindowsEmbedded
from raglens.printable import printable_name
from raglens.run import EngineSettings
from raglens.tokens import TokenCounter
from raglens.windows import Window


def _counter(config: RetrievalConfig) -> TokenCounter | None:
    """The model's tokenizer at the configuration's token limit, to measure what no window reads."""
    folder = model_folder(config.model)
    if folder is None or not (folder / "tokenizer.json").is_file():
        return None
    limit = config.max_seq_length if config.max_seq_length is not None else max_seq_length_of(folder)
    return TokenCounter(folder, config.model or DEFAULT_MODEL_NAME, limit)


def _unread_share(
    config: RetrievalConfig, texts: Mapping[str, str], windows: Sequence[Window]
) -> float | None:
    """The share of the corpus no window's score reads: none for BM25, which reads every token;
    for a model, measured with its tokenizer (None without one)."""
    if is_bm25(config.model):
        return 0.0
    counter = _counter(config)
    return measure_coverage(texts, windows, counter).unread_share if counter is not None else None


def evaluate_config(
    args: argparse.Namespace,
    config: RetrievalConfig,
    settings: EngineSettings,
    cases: Sequence[GoldenCase],
    corpus: Corpus,
    narrator: Narrator,
    stderr: Console,
    watch: Callable[[PipelineStep], None] | None = None,
) -> tuple[GridRow, PreparedIndex]:
    """Index ``corpus`` as ``config`` (through the cache), score every case, measure coverage;
    ``watch`` sees the indexing's steps."""
    prepared = prepare_index(config, settings, corpus, narrator, stderr, watch)
    texts = prepared.corpus.texts()
    resolved = resolve_refs(cases, texts)
    retriever = prepared.retriever
    results = score_cases(cases, retriever, resolved, args.k, narrator)
    unread = _unread_share(config, texts, retriever.windows)
    engine = prepared.engine
    row = GridRow(
        config,
        # --floor is a cosine: it means nothing on BM25's scale, whose rows judge at their own suggestion.
        summarise(results, args.k, None if is_bm25(config.model) else args.floor),
        engine.name,
        engine.max_seq_length,
        engine.precision,
        unread,
        prepared.cache_use.embedded,
        prepared.cache_use.from_cache,
    )
    return row, prepared


UPDATE_SECONDS = 2.0
"""The least time between two time-left updates while a row embeds."""


PACE_KEYS = ("model", "max_seq_length", "precision", "unit", "size")
"""What decides how fast windows embed: a pace is measured for each, so a 400-character row's pace
is never lent to a row of 2,000-character windows (each takes several times longer)."""


class _GridProgress:
    """The grid's time left as it runs: each row's steps timed, its embedding apart from the rest.

    A row's embedding runs from its cache check (loading the model for the windows included) to its
    last embedded batch; everything else it spends is its other time. The time left follows
    :func:`raglens.diagnostics.grid_pace.seconds_left`, a row not started yet counted at the windows
    the cache lacked before the grid began (the cache only grows, so that is at most what it embeds).
    """

    def __init__(
        self,
        configs: Sequence[RetrievalConfig],
        planned: Sequence[int],
        listen: Callable[[GridEvent], None] | None,
    ) -> None:
        self._configs = configs
        self._models = [settings_of(config, PACE_KEYS) for config in configs]
        self._planned = planned
        self._listen = listen
        self._paces: dict[str, EmbeddingPace] = {}
        self._other = 0.0
        """The finished rows' seconds on everything but embedding."""
        self._done = 0
        self._row = 0
        self._row_started = self._counted_at = self._last_sent = time.monotonic()
        self._row_left: int | None = None
        """The windows the running row has still to embed."""
        self._row_embedded = 0
        self._row_embedding = 0.0

    def start_row(self, index: int) -> int | None:
        """Row ``index`` starts: the time left from here, sent as its GridStarted."""
        self._row = index
        self._row_started = self._counted_at = time.monotonic()
        self._row_left = self._planned[index]
        self._row_embedded, self._row_embedding = 0, 0.0
        return self._send()

    def watch(self, step: PipelineStep) -> None:
        """One of the running row's steps; every UPDATE_SECONDS of embedding, the time left sent again."""
        now = time.monotonic()
        if isinstance(step, WindowsCut | VectorsFromCache):
            self._counted_at = now  # the windows to embed are known: embedding starts
            if isinstance(step, VectorsFromCache):
                self._row_left = step.total - step.found
        elif isinstance(step, IndexTaken):
            self._row_left = 0  # the whole index as stored: nothing to embed
        elif isinstance(step, WindowsEmbedded):
            self._row_left = step.total - step.done
            self._row_embedded, self._row_embedding = step.done, now - self._counted_at
            if now - self._last_sent >= UPDATE_SECONDS:
                self._send()

    def finish_row(self) -> None:
        """The running row was evaluated: its pace and its other time count from now on."""
        self._paces = self._paces_now()
        self._other += time.monotonic() - self._row_started - self._row_embedding
        self._done += 1
        self._row_embedded, self._row_embedding = 0, 0.0

    def _paces_now(self) -> dict[str, EmbeddingPace]:
        paces = dict(self._paces)
        if self._row_embedded:
            model = self._models[self._row]
            paces[model] = paces.get(model, EmbeddingPace()).plus(self._row_embedded, self._row_embedding)
        return paces

    def _send(self) -> int | None:
        now = self._last_sent = time.monotonic()
        rows = [RowToEmbed(self._models[self._row], self._row_left)] + [
            RowToEmbed(model, planned)
            for model, planned in zip(
                self._models[self._row + 1 :], self._planned[self._row + 1 :], strict=True
            )
        ]
        other_spent = now - self._row_started - self._row_embedding
        left = seconds_left(
            rows, self._paces_now(), self._other / self._done if self._done else None, other_spent
        )
        if self._listen is not None:
            total = len(self._configs)
            self._listen(GridStarted(self._row + 1, total, self._configs[self._row].describe(), left))
        return left


def run_grid(
    args: argparse.Namespace,
    configs: Sequence[RetrievalConfig],
    cases: Sequence[GoldenCase],
    narrator: Narrator,
    stderr: Console,
    listen: Callable[[GridEvent], None] | None = None,
) -> list[tuple[GridRow, PreparedIndex]]:
    """Every configuration in turn, narrating which one runs and about how long the rest will take
    (see :class:`_GridProgress`; nothing said while that is not known).

    ``listen`` hears a GridStarted and a GridRowDone for each configuration, and the GridStarted again
    with a new time left while a configuration embeds for long.
    """
    settings = engine_settings(args)
    corpus = read_corpus_named(args, narrator)  # once: every row cuts the same files
    done: list[tuple[GridRow, PreparedIndex]] = []
    total = len(configs)
    narrator.say(f"counting the windows each of the {total} configurations has to embed (for the time left)")
    planned = [windows_to_embed(config, settings, corpus, stderr) for config in configs]

    def heard(event: GridEvent) -> None:
        if isinstance(event, GridStarted):  # the terminal's bar shows the same time left
            narrator.grid_step(event.number - 1, event.total, event.config, event.seconds_left)
        if listen is not None:
            listen(event)

    progress = _GridProgress(configs, planned, heard)
    for number, config in enumerate(configs, 1):
        left = progress.start_row(number - 1)
        eta = "" if left is None else f"; about {duration(left)} left"
        narrator.say(f"grid {number}/{total}: {config.describe()}{eta}")
        row, prepared = evaluate_config(
            args, config, settings, cases, corpus, narrator, stderr, watch=progress.watch
        )
        progress.finish_row()
        done.append((row, prepared))
        if listen is not None:
            listen(GridRowDone(number, total, RowFigures.of(row)))
    narrator.grid_step(total, total, "done")
    return done


def event_writer(stream: TextIO) -> Callable[[GridEvent], None]:
    """Write each event to ``stream`` as one JSON line, flushed at once for the reader waiting on it."""

    def write(event: GridEvent) -> None:
        stream.write(encode(event) + "\n")
        stream.flush()

    return write


def grid_document(args: argparse.Namespace, rows: Sequence[GridRow]) -> list[dict[str, Any]]:
    """``"grid"``: one object per configuration, the best one marked."""
    best = best_row(rows)
    return [
        {
            "unit": row.config.params.unit.value,
            "size": row.config.params.size,
            "overlap": row.config.params.overlap,
            "model": row.model_name,
            "model_argument": row.config.model,
            "score_scale": row.config.score_scale,
            "max_seq_length": row.max_seq_length,
            "precision": row.precision,
            "recall": row.report.recall,
            "mrr": row.report.mrr,
            "ndcg": row.report.ndcg,
            "characters": dataclasses.asdict(row.report.characters),
            "by_kind": {
                kind.kind: {
                    "recall": kind.recall,
                    "mrr": kind.mrr,
                    "ndcg": kind.ndcg,
                    "abstain_rate": kind.abstain_rate,
                }
                for kind in row.report.kinds
            },
            "suggested_floor": row.report.calibration.suggested_floor,
            "separable": row.report.calibration.separable,
            "unread_share": row.unread_share,
            "embedded": row.embedded,
            "from_cache": row.from_cache,
            "best": index == best,
        }
        for index, row in enumerate(rows)
    ]


def cases_document(rows: Sequence[GridRow]) -> dict[str, Any]:
    """``"cases"``: each answerable case's rank in every row and its change against the best row,
    and ``"versus_best"``: each other row's gains and losses, by golden-file line; ``"best"`` is null
    and ``"nothing_found"`` true when no row found any answerable case in its top k."""
    comparison = compare_cases([row.report for row in rows], best_row(rows))
    return {
        "best": comparison.best,
        "nothing_found": nothing_found(rows),
        "negatives_not_compared": comparison.negatives,
        "versus_best": [
            {"row": tally.row, "gained": list(tally.gained), "lost": list(tally.lost), "same": tally.same}
            for tally in comparison.tallies
        ],
        "cases": [
            {
                "line": case.case_line,
                "query": case.results[0].case.query,
                "kind": case.results[0].case.kind,
                "ranks": [result.rank for result in case.results],
                "recall": [result.recall for result in case.results],
                "ndcg": [result.ndcg for result in case.results],
                "change": [None if change is None else change.value for change in case.changes],
            }
            for case in comparison.cases
        ],
    }


def ledger_document(args: argparse.Namespace, row: GridRow, prepared: PreparedIndex) -> dict[str, Any]:
    """One configuration's full eval document, as a non-grid run saves it."""
    return {
        "parameters": parameters_document(row.config.params, args.max_file_bytes),
        "model": model_document(prepared.engine),
        "window_count": prepared.retriever.window_count,
        **eval_document(row.report),
    }


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def print_grid(console: Console, k: int, axes: Sequence[GridAxis], rows: Sequence[GridRow]) -> None:
    """The table, best row marked (or said that no row found anything), then the chart."""
    best = best_row(rows)
    varied = varied_keys(rows) or [axis.key for axis in axes]
    table = Table(box=None, pad_edge=False, show_edge=False)
    figures = (f"recall@{k}", "MRR", f"nDCG@{k}", "by kind", "floor", "unread", "embedded/reused", "")
    for column in (*varied, *figures):
        table.add_column(column, justify="left" if column in ("model", "by kind", "") else "right")
    for index, row in enumerate(rows):
        kinds = " · ".join(
            f"{kind.kind} {_share(kind.recall)}"
            if kind.positives
            else f"{kind.kind} abstain {_share(kind.abstain_rate)}"
            for kind in row.report.kinds
        )
        floor = row.report.calibration.suggested_floor
        table.add_row(
            *(printable_name(shown_value(row.config, key)) for key in varied),
            _share(row.report.recall),
            "n/a" if row.report.mrr is None else f"{row.report.mrr:.3f}",
            "n/a" if row.report.ndcg is None else f"{row.report.ndcg:.3f}",
            Text(printable_name(kinds), style="dim"),
            "n/a" if floor is None else f"{floor:.3f}" + (" bm25" if is_bm25(row.config.model) else ""),
            _share(row.unread_share),
            f"{row.embedded}/{row.from_cache}",
            Text("◀ best", style="bold green") if index == best else "",
        )
    console.print(table)
    if nothing_found(rows):
        console.print(Text(not_found_message(k, rows), style="bold red"))
    _print_characters(console, k, varied, rows)
    console.print()
    print_case_comparison(console, k, varied, rows)
    console.print()
    console.print(terminal_chart(k, rows))


def _print_characters(console: Console, k: int, varied: Sequence[str], rows: Sequence[GridRow]) -> None:
    """Each row's character recall, precision and IoU, where some answers are spans."""
    spans = rows[0].report.characters.span_cases if rows else 0
    if not spans:
        return
    console.print(
        Text(
            f"\ncharacters of the {spans} answer(s) given as a symbol or lines, against the top {k}'s:",
            style="bold",
        )
    )
    for row in rows:
        characters = row.report.characters
        console.print(
            Text(
                printable_name(
                    f"  {row_label(row, varied)}: recall {_share(characters.recall)}, "
                    f"precision {_share(characters.precision)}, IoU {_share(characters.iou)}"
                )
            )
        )


CHANGE_MARKS = {Change.GAINED: "▲", Change.LOST: "▼", Change.SAME: "", None: ""}


def case_cell(result: CaseResult, change: Change | None) -> str:
    """A case's rank in one row as the per-question table shows it: ``3 ▲``, ``miss ▼``, ``1``."""
    return f"{rank_label(result)} {CHANGE_MARKS[change]}".rstrip()


def grid_cases(rows: Sequence[GridRow]) -> tuple[GridCase, ...]:
    """Every answerable case with its rank in each row, for the explorer to open."""
    comparison = compare_cases([row.report for row in rows], best_row(rows))
    return tuple(
        GridCase(
            case.case_line,
            case.results[0].case.query,
            tuple(str(ref) for ref in case.results[0].case.expect),
            tuple(
                case_cell(result, change) for result, change in zip(case.results, case.changes, strict=True)
            ),
        )
        for case in comparison.cases
    )


QUESTION_WIDTH = 36
"""The most of a question the per-question table shows; less on a narrow terminal."""


def print_case_comparison(console: Console, k: int, varied: Sequence[str], rows: Sequence[GridRow]) -> None:
    """Which questions each configuration wins (▲) or loses (▼) against the best one, and every
    case's rank in each configuration (``miss``: not in the top k)."""
    comparison = compare_cases([row.report for row in rows], best_row(rows))
    if not comparison.cases:
        return
    if comparison.best is None:
        console.print(
            Text(f"per question: every case is a miss in every configuration's top {k}", style="bold")
        )
        return
    best_label = row_label(rows[comparison.best], varied)
    console.print(Text(printable_name(f"per question, against the best ({best_label}):"), style="bold"))
    for tally in comparison.tallies:
        gained = ", ".join(f"line {line}" for line in tally.gained)
        lost = ", ".join(f"line {line}" for line in tally.lost)
        console.print(
            Text(
                printable_name(
                    f"  {row_label(rows[tally.row], varied)}: gains {len(tally.gained)}"
                    + (f" ({gained})" if gained else "")
                    + f", loses {len(tally.lost)}"
                    + (f" ({lost})" if lost else "")
                    + f", same {tally.same}"
                )
            )
        )
    if comparison.negatives:
        console.print(
            Text(
                f"  {comparison.negatives} negative case(s) have no rank to compare: see each row's floor",
                style="dim",
            )
        )
    cells = [
        [case_cell(result, change) for result, change in zip(case.results, case.changes, strict=True)]
        for case in comparison.cases
    ]
    headers = [
        f"#{number}" + (" ◀" if number - 1 == comparison.best else "") for number in range(1, len(rows) + 1)
    ]
    widths = [max(len(text) for text in column) for column in zip(headers, *cells, strict=True)]
    lines = [str(case.case_line) for case in comparison.cases]
    line_width = max(len("line"), *(len(line) for line in lines))
    # The question gives way on a narrow terminal, never a rank. Each column is padded by one
    # character a side, except at the table's edges.
    question_width = max(
        8, min(QUESTION_WIDTH, console.width - sum(width + 2 for width in widths) - line_width - 2)
    )
    table = Table(box=None, pad_edge=False, show_edge=False)
    table.add_column("line", justify="right", no_wrap=True, min_width=line_width)
    table.add_column("question", width=question_width, no_wrap=True, overflow="ellipsis")
    for header, width in zip(headers, widths, strict=True):
        table.add_column(header, justify="right", no_wrap=True, min_width=width)
    for case, line, row_cells in zip(comparison.cases, lines, cells, strict=True):
        styled = [
            Text(cell, style=_CHANGE_STYLES[change])
            for cell, change in zip(row_cells, case.changes, strict=True)
        ]
        table.add_row(line, Text(printable_name(case.results[0].case.query)), *styled)
    console.print(table)
    legend = "; ".join(f"#{number}: {row_label(row, varied)}" for number, row in enumerate(rows, 1))
    console.print(
        Text(
            printable_name(f"rank of the expected answer in the top {k}, ▲ better, ▼ worse than ◀; {legend}"),
            style="dim",
        )
    )


_CHANGE_STYLES = {Change.GAINED: "green", Change.LOST: "red", Change.SAME: "", None: ""}


def grid_report(k: int, axes: Sequence[GridAxis], rows: Sequence[GridRow]) -> str:
    """The table and the chart as :func:`print_grid` prints them to a pipe (at ``COLUMNS``, if set)."""
    buffer = io.StringIO()
    print_grid(console_for(file=buffer), k, axes, rows)
    return buffer.getvalue()


CHART_HEIGHT = 10
SERIES_MARKS = "●○■□▲△◆◇"


def terminal_chart(k: int, rows: Sequence[GridRow]) -> Text:
    """Recall@k (filled marks) and MRR (hollow) against the varied parameter, one pair per series."""
    x_key, series = chart_series(rows)
    xs = list(dict.fromkeys(x for one in series for x in one.x))
    column = max(6, *(len(x) + 2 for x in xs))
    grid = [[" "] * (column * len(xs)) for _ in range(CHART_HEIGHT + 1)]
    for number, one in enumerate(series):
        filled, hollow = (
            SERIES_MARKS[(2 * number) % len(SERIES_MARKS)],
            SERIES_MARKS[(2 * number + 1) % len(SERIES_MARKS)],
        )
        for x, recall, mrr in zip(one.x, one.recall, one.mrr, strict=True):
            position = xs.index(x) * column + column // 2
            for value, mark in ((mrr, hollow), (recall, filled)):
                if value is not None:
                    grid[CHART_HEIGHT - round(value * CHART_HEIGHT)][position] = mark
    chart = Text(f"recall@{k} (filled) and MRR (hollow) against {x_key}\n", style="bold")
    for level, cells in enumerate(grid):
        value = (CHART_HEIGHT - level) / CHART_HEIGHT
        label = f"{value:.1f} ┤" if level % 2 == 0 else "    │"
        chart.append(label, style="dim")
        chart.append("".join(cells).rstrip() + "\n")
    chart.append("    └" + "─" * (column * len(xs)) + "\n", style="dim")
    chart.append("     " + "".join(x.center(column) for x in xs) + "\n")
    for number, one in enumerate(series):
        filled, hollow = (
            SERIES_MARKS[(2 * number) % len(SERIES_MARKS)],
            SERIES_MARKS[(2 * number + 1) % len(SERIES_MARKS)],
        )
        chart.append(f"  {filled} {hollow}  {printable_name(one.label)}\n", style="dim")
    return chart
