"""An evaluation over a grid of configurations: one row each, the best one, and the series to chart."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from raglens.configuration import RetrievalConfig
from raglens.diagnostics.evaluation import EvalReport
from raglens.embedding_events import DEFAULT_MODEL_NAME


@dataclass(frozen=True)
class GridRow:
    """One configuration's evaluation, with what it cost and what of the corpus it never read."""

    config: RetrievalConfig
    report: EvalReport
    model_name: str
    max_seq_length: int | None
    """The token limit the model ran with (its own, unless the configuration set one)."""
    precision: str
    unread_share: float | None
    """The share of the corpus's characters no window's embedding reads; None without a tokenizer."""
    embedded: int
    from_cache: int


def best_row(rows: Sequence[GridRow]) -> int | None:
    """The index of the row with the highest recall@k, then MRR; the first of equals; None if none
    scored, or if no row found anything (a best of nothing would only be the first row)."""
    scored = [(row.report.recall, row.report.mrr or 0.0, -index) for index, row in enumerate(rows)]
    candidates = [entry for entry in scored if entry[0] is not None]
    if not candidates or nothing_found(rows):
        return None
    return -max(candidates)[2]


def nothing_found(rows: Sequence[GridRow]) -> bool:
    """Whether the rows have answerable cases and no row found any of them in its top k (every row's
    recall@k and MRR 0)."""
    scored = [row for row in rows if row.report.recall is not None]
    return bool(scored) and all(not row.report.recall and not row.report.mrr for row in scored)


def not_found_message(k: int, rows: Sequence[GridRow]) -> str:
    """What a grid whose rows found nothing says instead of marking a best row."""
    answerable = len(rows[0].report.positives) if rows else 0
    return (
        f"no configuration found any of the golden set's {answerable} answerable case(s) in its top {k}, "
        "so none is the best"
    )


def varied_keys(rows: Sequence[GridRow]) -> list[str]:
    """The configuration keys whose value differs between rows, in the order of ``KEYS``."""
    from raglens.configuration import KEYS

    values = {key: {_value(row.config, key) for row in rows} for key in KEYS}
    return [key for key in KEYS if len(values[key]) > 1]


def _value(config: RetrievalConfig, key: str) -> object:
    if key in ("unit", "size", "overlap"):
        value = getattr(config.params, key)
        return value.value if key == "unit" else value
    return getattr(config, key)


def shown_value(config: RetrievalConfig, key: str) -> str:
    """``key``'s value as a label; ``default`` where the configuration leaves it to the model (the
    bundled model's name for the model)."""
    value = _value(config, key)
    if value is None:
        return DEFAULT_MODEL_NAME if key == "model" else "default"
    return str(value)


def settings_of(config: RetrievalConfig, keys: Sequence[str], separator: str = ", ") -> str:
    """``config``'s values of ``keys``, e.g. ``size=800, model=bm25``; empty for no keys."""
    return separator.join(f"{key}={shown_value(config, key)}" for key in keys)


def row_label(row: GridRow, varied: Sequence[str], separator: str = ", ") -> str:
    """A row named by what varies between the rows, e.g. ``size=800, model=bm25``."""
    return settings_of(row.config, varied, separator) or row.config.describe()


@dataclass(frozen=True)
class Series:
    """One line of the chart: recall@k and MRR against the x parameter, for one value of the others."""

    label: str
    x: tuple[str, ...]
    recall: tuple[float | None, ...]
    mrr: tuple[float | None, ...]
    ndcg: tuple[float | None, ...] = ()
    rows: tuple[int, ...] = ()
    """The index of each point's row among the grid's rows."""


def chart_series(rows: Sequence[GridRow]) -> tuple[str, list[Series]]:
    """The x axis (the first varied key that is not the model) and one series per other combination.

    With only the model varied, the models are the x axis and there is one series.
    """
    varied = varied_keys(rows)
    x_key = next((key for key in varied if key != "model"), varied[0] if varied else "size")
    groups: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        label = settings_of(row.config, [key for key in varied if key != x_key])
        groups.setdefault(label or "all", []).append(index)
    series = [
        Series(
            label,
            tuple(shown_value(rows[index].config, x_key) for index in group),
            tuple(rows[index].report.recall for index in group),
            tuple(rows[index].report.mrr for index in group),
            tuple(rows[index].report.ndcg for index in group),
            tuple(group),
        )
        for label, group in groups.items()
    ]
    return x_key, series
