"""``--plot FILE``: the grid's chart as an SVG or PNG to paste into a pull request.

matplotlib is imported here and only here, when a plot is asked for: it takes ~0.5 s to import and
no other command needs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from raglens.diagnostics.case_comparison import CaseAcross, CaseComparison, Change, compare_cases, rank_label
from raglens.diagnostics.grid import (
    GridRow,
    best_row,
    chart_series,
    not_found_message,
    nothing_found,
    row_label,
    varied_keys,
)
from raglens.errors import BadInputError
from raglens.printable import printable_name

QUESTION_LABEL_CHARS = 38
"""How much of a question the ranks panel shows beside its line number."""


def save_plot(target: Path, k: int, rows: Sequence[GridRow]) -> None:
    """Two panels: recall@k (solid), MRR (dashed) and nDCG@k (dotted) against the varied parameter,
    one colour per series, the best configuration starred (or, where none found anything, said so
    above the panel); under it, every answerable question's rank in each configuration (grey: not in
    the top k), the best configuration's column framed."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed, and none is opened
    from matplotlib import pyplot

    comparison = compare_cases([row.report for row in rows], best_row(rows))
    question_count = len(comparison.cases)
    height = 4 + (0.32 * question_count + 1.2 if question_count else 0)
    if question_count:
        figure, (axes, ranks_axes) = pyplot.subplots(
            2,
            1,
            figsize=(max(8, 1.1 * len(rows) + 5), height),
            layout="constrained",
            height_ratios=[4, 0.32 * question_count + 1.2],
        )
    else:
        figure, axes = pyplot.subplots(figsize=(8, height), layout="constrained")
    try:
        _draw_aggregates(axes, k, rows, comparison.best)
        if question_count:
            _draw_ranks(ranks_axes, k, comparison, rows)
        figure.savefig(target)
    except OSError as error:
        raise BadInputError(f"cannot write {target}: {error.strerror or error}") from None
    finally:
        pyplot.close(figure)


def _draw_aggregates(axes: Any, k: int, rows: Sequence[GridRow], best: int | None) -> None:
    x_key, series = chart_series(rows)
    for number, one in enumerate(series):
        colour = f"C{number % 10}"
        positions = list(range(len(one.x)))
        axes.plot(positions, _values(one.recall), marker="o", color=colour, label=f"recall@{k} · {one.label}")
        axes.plot(
            positions, _values(one.mrr), marker="s", linestyle="--", color=colour, label=f"MRR · {one.label}"
        )
        axes.plot(
            positions,
            _values(one.ndcg),
            marker="^",
            linestyle=":",
            color=colour,
            label=f"nDCG@{k} · {one.label}",
        )
        axes.set_xticks(positions, list(one.x))
        if best is not None and best in one.rows:
            position = one.rows.index(best)
            recall = one.recall[position]
            if recall is not None:
                axes.plot(
                    [position], [recall], marker="*", markersize=18, color="gold", markeredgecolor="black"
                )
                axes.annotate("best", (position, recall), textcoords="offset points", xytext=(8, 8))
    if nothing_found(rows):
        axes.set_title(not_found_message(k, rows), color="darkred", fontsize="small")
    axes.set_xlabel(x_key)
    axes.set_ylim(0, 1.05)  # the absolute scale, as everywhere in raglens: never stretched to the data
    axes.set_ylabel("score")
    axes.grid(alpha=0.3)
    axes.legend(fontsize="x-small", ncols=2)


def _draw_ranks(axes: Any, k: int, comparison: CaseComparison, rows: Sequence[GridRow]) -> None:
    """A grid of ranks, questions down and configurations across; misses grey, the best framed."""
    import numpy as np

    row_count = len(rows)
    cells = np.full((len(comparison.cases), row_count), np.nan)
    for line, case in enumerate(comparison.cases):
        for column, result in enumerate(case.results):
            rank = result.rank
            if rank is not None and rank <= k:
                cells[line, column] = rank
    colours = matplotlib_colormap()
    axes.imshow(np.ma.masked_invalid(cells), cmap=colours, vmin=1, vmax=max(k, 2), aspect="auto")
    for line, case in enumerate(comparison.cases):
        for column, (result, change) in enumerate(zip(case.results, case.changes, strict=True)):
            mark = {Change.GAINED: " ▲", Change.LOST: " ▼"}.get(change, "") if change is not None else ""
            dark = result.rank is not None and result.rank <= max(1, k // 2)
            colour = "white" if dark else "black"
            text = rank_label(result) + mark
            axes.text(column, line, text, ha="center", va="center", fontsize="x-small", color=colour)
    axes.set_facecolor("#dddddd")  # a miss: no colour
    varied = varied_keys(rows)
    names = [f"#{number}\n{row_label(row, varied, separator=chr(10))}" for number, row in enumerate(rows, 1)]
    axes.set_xticks(range(row_count), names, fontsize="x-small")
    axes.set_yticks(range(len(comparison.cases)), [_question_label(case) for case in comparison.cases])
    axes.tick_params(axis="y", labelsize="x-small")
    axes.set_title(
        f"rank of the expected answer per question (grey: not in the top {k}; ▲▼ against the best)"
    )
    if comparison.best is not None:
        from matplotlib.patches import Rectangle

        axes.add_patch(
            Rectangle(
                (comparison.best - 0.5, -0.5),
                1,
                len(comparison.cases),
                fill=False,
                linewidth=2,
                edgecolor="black",
            )
        )


def matplotlib_colormap() -> Any:
    """Good ranks dark, ranks near k light."""
    from matplotlib import colormaps

    return colormaps["viridis"]


def _question_label(case: CaseAcross) -> str:
    query = printable_name(case.results[0].case.query)
    if len(query) > QUESTION_LABEL_CHARS:
        query = query[: QUESTION_LABEL_CHARS - 1] + "…"
    return f"{case.case_line}: {query}"


def _values(values: Sequence[float | None]) -> list[float]:
    """None (no answerable case) as a gap in the line."""
    return [float("nan") if value is None else value for value in values]
