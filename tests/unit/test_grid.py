"""The grid's pure parts: the best row, which keys vary, and the chart's series."""

from __future__ import annotations

from raglens.configuration import RetrievalConfig
from raglens.diagnostics.evaluation import Calibration, EvalReport
from raglens.diagnostics.grid import GridRow, best_row, chart_series, varied_keys
from raglens.windows import Unit, WindowParams


def row(size: int, model: str | None, recall: float | None, mrr: float | None) -> GridRow:
    report = _Report(recall, mrr)
    config = RetrievalConfig(WindowParams(Unit.CHARS, size, 0), model)
    return GridRow(config, report, model or "all-MiniLM-L6-v2", 256, "fp32", None, 0, 0)  # type: ignore[arg-type]


class _Report(EvalReport):
    """A report whose recall and MRR are given (nDCG: MRR's; the grid reads nothing else of it)."""

    def __init__(self, recall: float | None, mrr: float | None) -> None:
        object.__setattr__(self, "_values", (recall, mrr))
        object.__setattr__(self, "calibration", Calibration(None, None))

    @property
    def recall(self) -> float | None:
        return self._values[0]  # type: ignore[no-any-return, attr-defined]

    @property
    def mrr(self) -> float | None:
        return self._values[1]  # type: ignore[no-any-return, attr-defined]

    @property
    def ndcg(self) -> float | None:
        return self._values[1]  # type: ignore[no-any-return, attr-defined]


def test_the_best_row_has_the_highest_recall_then_mrr_and_the_first_of_equals_wins() -> None:
    rows = [
        row(600, None, 0.5, 0.9),
        row(800, None, 0.75, 0.2),
        row(1000, None, 0.75, 0.4),
        row(1200, None, 0.75, 0.4),
    ]
    assert best_row(rows) == 2
    assert best_row([row(600, None, None, None)]) is None


def test_the_chart_has_the_varied_parameter_across_and_one_series_per_model() -> None:
    rows = [row(size, model, 0.5, 0.25) for model in (None, "/m/bge") for size in (600, 1000)]
    assert varied_keys(rows) == ["size", "model"]
    x_key, series = chart_series(rows)
    assert x_key == "size"
    assert [(one.label, one.x) for one in series] == [
        ("model=all-MiniLM-L6-v2", ("600", "1000")),
        ("model=/m/bge", ("600", "1000")),
    ]
    models_only = [row(1000, model, 0.5, None) for model in (None, "/m/bge")]
    assert chart_series(models_only)[0] == "model"
