"""Which engine serves queries and windows, for each precision and state of the export, without torch."""

from __future__ import annotations

import pytest

from raglens.embedding_events import ModelChoice
from raglens.engine import EXPORT_FIRST_FROM, Engines
from tests.fakes import HashingEmbedder


class ExportStub(HashingEmbedder):
    """Stands in for the ONNX export."""

    engine = "onnxruntime"


class ModelStub(HashingEmbedder):
    """Stands in for sentence-transformers."""

    engine = "sentence-transformers"


class StubbedEngines(Engines):
    """Engines whose model and export are stubs; records what was opened and exported."""

    def __init__(self, precision: str, *, exported: bool, export_first_from: int | None = EXPORT_FIRST_FROM):
        super().__init__(ModelChoice(precision=precision), None, None, export_first_from=export_first_from)
        self.export: ExportStub | None = ExportStub() if exported else None
        self.opened = 0
        self.exports = 0

    def _exported(self) -> ExportStub | None:  # type: ignore[override]
        return self.export

    def _open_model(self) -> ModelStub:  # type: ignore[override]
        self.opened += 1
        return ModelStub()

    def export_if_wanted(self, *, use_now: bool = True) -> bool:
        if self.export is None:
            self.exports += 1
            self.export = ExportStub()
        return True


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_queries_take_the_export_at_any_precision_so_no_model_opens(precision: str) -> None:
    engines = StubbedEngines(precision, exported=True)
    assert isinstance(engines.for_queries(), ExportStub)
    assert engines.opened == 0, "a warm start never opens the model (never imports torch)"
    info = engines.info()
    assert (info.engine, info.precision, info.window_engine) == ("onnxruntime", precision, None)


def test_windows_take_the_export_at_fp32_and_the_model_at_bf16() -> None:
    exact = StubbedEngines("fp32", exported=True)
    assert isinstance(exact.for_windows(10), ExportStub) and exact.opened == 0
    approximate = StubbedEngines("bf16", exported=True)
    assert isinstance(approximate.for_windows(10), ModelStub) and approximate.opened == 1
    info = approximate.info()
    assert (info.engine, info.window_engine) == ("onnxruntime", "sentence-transformers")
    assert "windows via sentence-transformers, queries via onnxruntime" in info.describe()
    assert "bf16 ≈ approximate" in info.describe()


def test_many_windows_and_no_export_yet_export_first_even_after_a_query_opened_the_model() -> None:
    engines = StubbedEngines("fp32", exported=False)
    assert isinstance(engines.for_queries(), ModelStub), "no export yet: the model answers"
    assert isinstance(engines.for_windows(EXPORT_FIRST_FROM - 1), ModelStub) and engines.exports == 0
    assert isinstance(engines.for_windows(EXPORT_FIRST_FROM), ExportStub) and engines.exports == 1
    assert engines.opened == 1


def test_the_explorers_process_never_exports_first() -> None:
    engines = StubbedEngines("fp32", exported=False, export_first_from=None)
    assert isinstance(engines.for_windows(100_000), ModelStub) and engines.exports == 0


def test_engines_serving_a_model_use_it_for_everything() -> None:
    model = ModelStub()
    engines = Engines.serving(model)
    assert engines.for_queries() is model and engines.for_windows(5_000) is model
    assert engines.export_if_wanted() is False
