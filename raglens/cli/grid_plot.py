"""``--plot FILE``: the grid's chart as an SVG or PNG to paste into a pull request.

matplotlib is imported here and only here, when a plot is asked for: it takes ~0.5 s to import and
no other command needs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from raglens.diagnostics.grid import GridRow, chart_series
from raglens.errors import BadInputError


def save_plot(target: Path, k: int, rows: Sequence[GridRow]) -> None:
    """Draw recall@k (solid) and MRR (dashed) against the varied parameter, one colour per series."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed, and none is opened
    from matplotlib import pyplot

    x_key, series = chart_series(rows)
    figure, axes = pyplot.subplots(figsize=(7, 4), layout="constrained")
    for number, one in enumerate(series):
        colour = f"C{number % 10}"
        positions = range(len(one.x))
        axes.plot(positions, _values(one.recall), marker="o", color=colour, label=f"recall@{k} · {one.label}")
        axes.plot(
            positions, _values(one.mrr), marker="s", linestyle="--", color=colour, label=f"MRR · {one.label}"
        )
        axes.set_xticks(list(positions), list(one.x))
    axes.set_xlabel(x_key)
    axes.set_ylim(0, 1.02)  # the absolute scale, as everywhere in raglens: never stretched to the data
    axes.set_ylabel("score")
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small")
    try:
        figure.savefig(target)
    except OSError as error:
        raise BadInputError(f"cannot write {target}: {error.strerror or error}") from None
    finally:
        pyplot.close(figure)


def _values(values: Sequence[float | None]) -> list[float]:
    """None (no answerable case) as a gap in the line."""
    return [float("nan") if value is None else value for value in values]
