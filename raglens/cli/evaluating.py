"""``raglens eval``: a golden set against the corpus, with recall@k, MRR and a calibrated floor."""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from raglens.cli.consoles import console_for
from raglens.cli.documents import SCHEMA_VERSION, dump, model_document, parameters_document
from raglens.cli.lab_documents import eval_document
from raglens.cli.lab_render import print_eval
from raglens.cli.narration import Narrator
from raglens.cli.searching import engine_header, prepare_index, read_corpus_named, stdout_kept_for_data
from raglens.cli.settings import check_model_path, engine_settings, retrieval_config, top_k
from raglens.diagnostics.evaluation import CaseResult, evaluate_case, resolve_refs, summarise
from raglens.diagnostics.golden import ExpectedRef, GoldenCase, read_golden
from raglens.diagnostics.symbols import Definition
from raglens.errors import BadInputError, RaglensError
from raglens.retrieval import Retriever
from raglens.windows import WindowParams

if TYPE_CHECKING:
    from raglens.grid_events import GridEvent


def run_eval(args: argparse.Namespace, params: WindowParams, stderr: Console) -> int:
    """Read the golden set first (a bad line fails before any model loads), then index and score it."""
    if args.events:
        return _run_with_events(args, params, stderr)
    return _run_eval(args, params, stderr, None)


def _run_with_events(args: argparse.Namespace, params: WindowParams, stderr: Console) -> int:
    """``--events``: the grid as JSON lines on stdout, ended by a GridFailed on any failure, which then
    ends the command as it would without the flag (its message on stderr, its exit code)."""
    from raglens.cli.eval_grid import event_writer
    from raglens.grid_events import GridFailed

    write = event_writer(sys.stdout)  # the real stdout: model libraries' prints go to stderr meanwhile
    try:
        if not args.grid:
            raise BadInputError("--events streams an eval grid: add --grid KEY=V1,V2")
        if args.json:
            raise BadInputError("--events and --json both print on stdout: choose one")
        return _run_eval(args, params, stderr, write)
    except RaglensError as error:
        _last_word(write, GridFailed(str(error)))
        raise
    except KeyboardInterrupt as error:
        from raglens.cli.main import Terminated

        _last_word(write, GridFailed("terminated" if isinstance(error, Terminated) else "interrupted"))
        raise
    except Exception as error:
        _last_word(write, GridFailed(f"{type(error).__name__}: {error}"))
        raise


def _last_word(write: Callable[[GridEvent], None], event: GridEvent) -> None:
    """Send the failure, unless the reader went away (the failure may be that)."""
    with contextlib.suppress(OSError):
        write(event)


def score_cases(
    cases: Sequence[GoldenCase],
    retriever: Retriever,
    resolved: Mapping[ExpectedRef, tuple[Definition, ...]],
    k: int,
    narrator: Narrator,
) -> list[CaseResult]:
    """Every case ranked and scored, the count done shown on a terminal (Narrator.cases_scored)."""
    results = []
    total = len(cases)
    narrator.cases_scored(0, total)
    for done, case in enumerate(cases, 1):
        results.append(evaluate_case(case, retriever.scores(case.query), retriever.windows, resolved, k))
        narrator.cases_scored(done, total)
    return results


def _run_eval(
    args: argparse.Namespace,
    params: WindowParams,
    stderr: Console,
    events: Callable[[GridEvent], None] | None,
) -> int:
    """The evaluation, of one configuration or a grid; ``events``: where the grid sends its events."""
    top_k(args)
    if args.floor is not None and not math.isfinite(args.floor):
        raise BadInputError(f"--floor must be a number, got {args.floor}")
    save_folder = _save_folder(args.save)
    cases = read_golden(args.golden)
    if args.grid:
        return _run_eval_grid(args, params, stderr, cases, save_folder, events)
    config, settings = retrieval_config(args, params), engine_settings(args)
    json_mode = bool(args.json)
    with Narrator(stderr, quiet=args.quiet) as narrator, stdout_kept_for_data(json_mode):
        corpus = read_corpus_named(args, narrator)
        prepared = prepare_index(config, settings, corpus, narrator, stderr)
        texts = prepared.corpus.texts()
        resolved = resolve_refs(cases, texts)
        retriever = prepared.retriever
        narrator.say(f"evaluating {len(cases)} case(s) at k={args.k}")
        results = score_cases(cases, retriever, resolved, args.k, narrator)
    report = summarise(results, args.k, args.floor)
    document: dict[str, Any] = {
        "schema": SCHEMA_VERSION,
        "when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "corpus": str(prepared.corpus.root),
        "golden": str(Path(args.golden).resolve()),
        "parameters": parameters_document(params, args.max_file_bytes),
        "model": model_document(prepared.engine),
        "window_count": retriever.window_count,
        **eval_document(report),
    }
    if save_folder is not None:
        saved = _save(save_folder, document)
        stderr.print(f"raglens: saved the report to {saved}", markup=False)
    if json_mode:
        print(dump(document))
    else:
        console = console_for()
        console.print(engine_header(prepared.engine), markup=False, style="dim")
        print_eval(console, report)
    return 0


def _run_eval_grid(
    args: argparse.Namespace,
    params: WindowParams,
    stderr: Console,
    cases: list[GoldenCase],
    save_folder: Path | None,
    events: Callable[[GridEvent], None] | None,
) -> int:
    """The golden set over every combination of ``--grid``: every combination is checked first.

    ``events``: where the grid's events go, its report last, instead of the table or the document.
    """
    from raglens.cli.eval_grid import (
        cases_document,
        grid_cases,
        grid_document,
        grid_report,
        ledger_document,
        print_grid,
        run_grid,
    )
    from raglens.configuration import grid_configs, parse_grid_axis
    from raglens.diagnostics.grid import best_row
    from raglens.grid_events import GridFinished

    axes = [parse_grid_axis(spec) for spec in args.grid]
    configs = grid_configs(retrieval_config(args, params), axes)
    for config in configs:
        check_model_path(config, args.embedder_factory)
    plot = _plot_target(args.plot)
    json_mode = bool(args.json)
    data_on_stdout = json_mode or events is not None
    with Narrator(stderr, quiet=args.quiet) as narrator, stdout_kept_for_data(data_on_stdout):
        done = run_grid(args, configs, cases, narrator, stderr, events)
    rows = [row for row, _ in done]
    header = {
        "schema": SCHEMA_VERSION,
        "when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "corpus": str(done[0][1].corpus.root),
        "golden": str(Path(args.golden).resolve()),
        "k": args.k,
    }
    if save_folder is not None:
        for row, prepared in done:
            saved = _save(save_folder, {**header, **ledger_document(args, row, prepared)})
            stderr.print(f"raglens: saved {row.config.describe()} to {saved}", markup=False)
    if plot is not None:
        from raglens.cli.grid_plot import save_plot

        save_plot(plot, args.k, rows)
        stderr.print(f"raglens: drew the chart to {plot}", markup=False)
    if events is not None:
        events(GridFinished(grid_report(args.k, axes, rows), grid_cases(rows), best_row(rows)))
    elif json_mode:
        print(
            dump(
                {
                    **header,
                    "axes": {axis.key: list(axis.values) for axis in axes},
                    "grid": grid_document(args, rows),
                    **cases_document(rows),
                }
            )
        )
    else:
        print_grid(console_for(), args.k, axes, rows)
    return 0


def _plot_target(plot: str | None) -> Path | None:
    """Where ``--plot`` draws, checked before minutes of embedding: an .svg or .png in a real folder."""
    if plot is None:
        return None
    target = Path(plot).expanduser()
    if target.suffix.lower() not in (".svg", ".png"):
        raise BadInputError(f"--plot {plot}: name an .svg or .png file")
    if not target.parent.is_dir():
        raise BadInputError(f"--plot {plot}: no such folder {target.parent}")
    return target


def _save_folder(save: str | None) -> Path | None:
    """The folder ``--save`` names, checked before minutes of embedding rather than after."""
    if save is None:
        return None
    folder = Path(save).expanduser()
    if not folder.is_dir():
        raise BadInputError(f"--save {save}: no such folder")
    return folder


def _save(folder: Path, document: dict[str, Any]) -> Path:
    """Write ``document`` as ``raglens-eval-<UTC time>.json`` (a new name each run: a ledger row)."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    target = folder / f"raglens-eval-{stamp}.json"
    counter = 1
    while target.exists():
        counter += 1
        target = folder / f"raglens-eval-{stamp}-{counter}.json"
    try:
        target.write_text(json.dumps(document, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    except OSError as error:
        raise BadInputError(f"cannot write {target}: {error.strerror or error}") from None
    return target
