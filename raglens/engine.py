"""The one place that opens a model's engine, for the CLI and the embedding process alike.

Engines, fastest start first: a test factory; the model's ONNX export from the cache (onnxruntime
and tokenizers, ~0.5 s, no torch), written first if the model is one whose graph raglens writes
without torch (the bundled one, ~3 s); sentence-transformers (imports torch: 7-20 s here). Queries
always take the export when there is one, whatever the precision, so a warm start never imports
torch. Windows take the export at fp32 (exact, and the fused graph is the fastest exact engine
measured here) and sentence-transformers at bf16.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from raglens.devices import runs_on_cpu
from raglens.embedding import Embedder, SentenceTransformerEmbedder, embedder_from_factory
from raglens.embedding_events import EngineInfo, ModelChoice
from raglens.fingerprint import ModelFingerprint
from raglens.precision import is_exact

EXPORT_FIRST_FROM = 1000
"""From this many windows to embed on, export before embedding and embed with the fused export.

The export costs ~10 s once torch is loaded; the fused graph embeds ~30% faster than
sentence-transformers (28-30 against 22-25 windows/s here), which repays it near a thousand windows.
Below that the windows go through sentence-transformers and the export follows them.
"""


def engine_name(embedder: Embedder) -> str:
    """Which library computes ``embedder``'s vectors, for the headers that name it."""
    return str(getattr(embedder, "engine", type(embedder).__name__))


Note = Callable[[str], None]


def _say_nothing(note: str) -> None:
    """The default listener, which ignores what the engines say."""


class Engines:
    """The engines one run needs, each opened at most once and only when first asked for."""

    def __init__(
        self,
        choice: ModelChoice,
        fingerprint: ModelFingerprint | None,
        cache_dir: Path | None,
        *,
        on_note: Note = _say_nothing,
        on_warning: Note = _say_nothing,
        export_first_from: int | None = EXPORT_FIRST_FROM,
    ) -> None:
        """``fingerprint`` and ``cache_dir`` locate the export; without either, no export is used or made.

        ``on_note`` hears what the engines do; ``on_warning`` what went wrong (an export that failed
        its check), which the user must see.

        ``export_first_from``: from this many windows to embed on, export before embedding them; None
        never exports first (the explorer's process, which must keep answering queries meanwhile).
        """
        self.choice = choice
        self._fingerprint = fingerprint
        self._cache_dir = cache_dir
        self._on_note = on_note
        self._on_warning = on_warning
        self._export_first_from = export_first_from
        self._export: Embedder | None = None
        self._export_looked_up = False
        self._export_tried = False
        self._model: Embedder | None = None
        self._window_engine: Embedder | None = None
        """The engine that embedded windows in this run, if any did."""

    @classmethod
    def serving(cls, embedder: Embedder) -> Engines:
        """Engines that are all ``embedder``, already open: for callers that hold a model themselves."""
        engines = cls(ModelChoice(), None, None)
        engines._model = embedder
        engines._export_looked_up = True
        return engines

    @property
    def _exportable(self) -> bool:
        return (
            self.choice.factory is None
            and self._fingerprint is not None
            and self._cache_dir is not None
            and runs_on_cpu(self.choice.device)
        )

    def _exported(self) -> Embedder | None:
        """The export from the cache, looked up once; written first when that needs no torch.

        A model whose graph raglens writes itself (the bundled one) is exported before anything else
        on its first run, in about three seconds: no surface then waits for torch's import.
        """
        if not self._export_looked_up and self._exportable:
            from raglens.onnx_model import exports_without_torch, load_exported

            assert self._cache_dir is not None and self._fingerprint is not None
            self._export = load_exported(
                self._cache_dir, self._fingerprint, on_warning=self._on_warning, on_note=self._on_note
            )
            if (
                self._export is None
                and not self._export_tried
                and exports_without_torch(self._fingerprint)
                and self._export_now()
            ):
                self._export = load_exported(self._cache_dir, self._fingerprint, on_warning=self._on_warning)
        self._export_looked_up = True
        return self._export

    def for_queries(self) -> Embedder:
        """The engine for queries: the export when there is one (no torch), else the windows' engine."""
        exported = self._exported()
        return exported if exported is not None else self.for_windows(0)

    def query_engine(self) -> str:
        """What embeds queries, as a cached query vector is filed: engine, its precision, device.

        The fp32 export answers queries at any precision; without it, the model at the run's own.
        """
        queries = self.for_queries()
        precision = "fp32" if queries is self._exported() else self.choice.precision
        device = getattr(queries, "query_device", getattr(queries, "device", "cpu"))
        return f"{engine_name(queries)}|{precision}|{device}"

    def for_windows(self, count: int) -> Embedder:
        """The engine for ``count`` windows: the export at fp32, the model itself otherwise.

        With many windows and no export yet, the model is exported first and the export embeds them.
        """
        engine = self._engine_for_windows(count)
        if count > 0:
            self._window_engine = engine
        return engine

    def _engine_for_windows(self, count: int) -> Embedder:
        exported = self._exported()
        if exported is not None and is_exact(self.choice.precision):
            return exported
        if self._model is None:
            self._model = self._open_model()
        first_from = self._export_first_from
        if first_from is not None and count >= first_from and self.export_if_wanted():
            exported = self._exported()
            if exported is not None and is_exact(self.choice.precision):
                return exported
        return self._model

    def info(self) -> EngineInfo:
        """What computes this run's vectors, for headers and JSON; opens the query engine."""
        queries = self.for_queries()
        windows = self._window_engine
        return EngineInfo(
            queries.name,
            queries.dimension,
            queries.max_seq_length,
            str(getattr(queries, "device", "cpu")),
            self.choice.precision,
            engine_name(queries),
            engine_name(windows) if windows is not None else None,
        )

    def _open_model(self) -> Embedder:
        choice = self.choice
        if choice.factory is not None:
            return embedder_from_factory(choice.factory)
        self._on_note(f"loading {choice.label} (importing sentence-transformers takes a few seconds)")
        return SentenceTransformerEmbedder(
            choice.model,
            choice.device,
            offline=choice.offline,
            precision=choice.precision,
            max_seq_length=choice.max_seq_length,
        )

    def export_if_wanted(self, *, use_now: bool = True) -> bool:
        """Export the model once into the cache, so later runs need no torch; whether an export now exists.

        Only after the model was loaded (torch is in memory then), and never for a fake or off the CPU.
        A failure costs only the fast path, and is said once. With ``use_now`` false the export is for
        later runs only: this one keeps the engines it has, so its scores never change engine midway.
        """
        if self._exported() is not None:
            return True
        if (
            self._export_tried
            or not self._exportable
            or not isinstance(self._model, SentenceTransformerEmbedder)
        ):
            return False
        from raglens.onnx_model import exportable

        assert self._fingerprint is not None
        if not exportable(self._model, self._fingerprint):
            self._export_tried = True
            return False
        if not self._export_now():
            return False
        if not use_now:
            return True
        self._export_looked_up = False
        return self._exported() is not None

    def _export_now(self) -> bool:
        """Export the model into the cache, once; whether that worked (a failure is said once)."""
        from raglens.onnx_model import export_model, export_path, exports_without_torch

        assert self._cache_dir is not None and self._fingerprint is not None
        self._export_tried = True
        target = export_path(self._cache_dir, self._fingerprint)
        if exports_without_torch(self._fingerprint):
            self._on_note(f"writing {self._fingerprint.name} as an ONNX graph once, with no torch to import")
        else:
            self._on_note("exporting the model to ONNX once, so that later runs need not import torch")
        try:
            export_model(self._fingerprint, target)
        except Exception as error:  # any failure only costs the fast path
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            self._on_note(f"no ONNX export of {self._fingerprint.name}: {reason}")
            return False
        self._on_note(f"exported to {target}")
        return True
