"""The model as one ONNX graph (transformer, pooling, normalisation), run without torch.

Importing sentence-transformers takes 7-20 s here; onnxruntime and tokenizers load in ~0.5 s and
embed a query in ~7 ms, with vectors equal to sentence-transformers' (cosine 0.99999+). raglens
exports each model once, from sentence-transformers, into the cache, and checks the export
against the model before keeping it.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from raglens.embedding import SentenceTransformerEmbedder, normalize_rows
from raglens.embedding_events import ReadingExtent
from raglens.errors import ModelLoadError
from raglens.fingerprint import ModelFingerprint
from raglens.locations import ONNX_FOLDER
from raglens.onnx_graph import fuse, split_skip_layer_norms
from raglens.tokens import TokenCounter, load_tokenizer

EXPORT_VERSION = 3
"""Bump when the exported graph changes, so older exports are redone (2: onnxruntime's fusions applied;
3: its skip layer norms split again). A version-2 export is upgraded in place, without torch."""
AGREEMENT = 0.9999
"""The least cosine between an export's vectors and the model's for the export to be kept."""

_PROBES = (
    "how are failed jobs retried?",
    "def drain_pending_jobs(queue, timeout=None):\n    while queue.pending():\n        queue.wait(timeout)\n",
    "Wie starte ich einen Worker?",
    "x" * 3000,  # longer than any model reads: checks truncation too
)


class ExportUnsupported(ModelLoadError):
    """The model's pipeline is not one raglens can export (only transformer, pooling, normalise)."""


UPGRADE_AGREEMENT = 0.999999
"""The least cosine between an upgraded export and the export it was made from: the same sums, in
another order, so far tighter than AGREEMENT."""


def export_path(cache_dir: Path, fingerprint: ModelFingerprint, version: int = EXPORT_VERSION) -> Path:
    """Where the export of the model with ``fingerprint`` lives in the cache."""
    return cache_dir / ONNX_FOLDER / f"{fingerprint.files_digest}-v{version}.onnx"


def _pooling(folder: Path) -> tuple[str, bool]:
    """The model's pooling (``mean`` or ``cls``) and whether it normalises, from its module list."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ExportUnsupported(f"no readable modules.json in {folder}: {error}") from None
    kinds = [str(module.get("type", "")).rpartition(".")[2] for module in modules]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise ExportUnsupported(f"modules {kinds}: raglens exports only Transformer, Pooling[, Normalize]")
    pooling_path = folder / modules[1].get("path", "1_Pooling") / "config.json"
    try:
        pooling = json.loads(pooling_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ExportUnsupported(f"cannot read the pooling config {pooling_path}: {error}") from None
    modes = [key for key, value in pooling.items() if key.startswith("pooling_mode_") and value]
    if modes == ["pooling_mode_mean_tokens"]:
        return "mean", kinds[-1] == "Normalize"
    if modes == ["pooling_mode_cls_token"]:
        return "cls", kinds[-1] == "Normalize"
    raise ExportUnsupported(f"pooling {modes}: raglens exports mean or CLS pooling only")


def export_model(fingerprint: ModelFingerprint, target: Path) -> None:
    """Export the model at ``fingerprint.folder`` to ``target`` and check it; needs torch (seconds).

    The file appears only once it agrees with the model, so a crash never leaves a half-written one.
    """
    import torch
    from transformers import AutoModel

    pooling, _ = _pooling(fingerprint.folder)
    # Eager attention: onnxruntime's optimiser can fuse it, and SDPA does not export cleanly.
    transformer: Any = AutoModel.from_pretrained(fingerprint.folder, attn_implementation="eager")
    transformer.eval()
    accepts_token_types = "token_type_ids" in transformer.forward.__code__.co_varnames

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer  # a submodule, so its weights export as weights

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any = None) -> Any:
            inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
            if token_type_ids is not None:
                inputs["token_type_ids"] = token_type_ids
            hidden = self.transformer(**inputs).last_hidden_state
            if pooling == "cls":
                return hidden[:, 0]
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    names = ["input_ids", "attention_mask", *(["token_type_ids"] if accepts_token_types else [])]
    sample = tuple(torch.ones((2, 16), dtype=torch.long) for _ in names)
    axes = {name: {0: "batch", 1: "sequence"} for name in names} | {"embedding": {0: "batch"}}
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned_exports(target.parent)
    with _partial_file(target.parent) as plain, _partial_file(target.parent) as fused:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer advice; the agreement check below decides
            torch.onnx.export(
                Pooled(),
                sample,
                str(plain),
                input_names=names,
                output_names=["embedding"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
        config = transformer.config
        candidates = [plain]
        if fuse(plain, fused, config.num_attention_heads, config.hidden_size):
            candidates.insert(0, fused)  # faster: kept only if it agrees with the model as well
        expected = _reference_vectors(fingerprint)
        failures = []
        for candidate in candidates:
            agreement = _agreement(expected, candidate, fingerprint)
            if agreement >= AGREEMENT:
                os.replace(candidate, target)
                return
            failures.append(f"{candidate.name}: cosine {agreement:.6f}")
        raise ExportUnsupported(f"the export does not agree with the model ({'; '.join(failures)})")


@contextlib.contextmanager
def _partial_file(folder: Path) -> Iterator[Path]:
    """A fresh ``*.partial`` file in ``folder``, deleted on the way out unless it was renamed away."""
    handle, name = tempfile.mkstemp(dir=folder, suffix=".partial")
    os.close(handle)
    try:
        yield Path(name)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)


def _remove_abandoned_exports(folder: Path, older_than_s: float = 3600) -> None:
    """Delete half-written exports (~90 MB each) left by a process killed while exporting."""
    cutoff = time.time() - older_than_s
    for leftover in folder.glob("*.partial"):
        with contextlib.suppress(OSError):
            if leftover.stat().st_mtime < cutoff:
                leftover.unlink()


def _reference_vectors(fingerprint: ModelFingerprint) -> np.ndarray:
    """The model's own fp32 vectors of the probe texts, through sentence-transformers."""
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(fingerprint.folder), device="cpu")
    return normalize_rows(reference.encode(list(_PROBES), convert_to_numpy=True))


def _agreement(expected: np.ndarray, exported: Path, fingerprint: ModelFingerprint) -> float:
    """The least cosine between the model's probe vectors and those of the graph at ``exported``."""
    produced = OnnxEmbedder(exported, fingerprint).encode(_PROBES)
    return float(np.min(np.sum(expected * produced, axis=1)))


BULK_BATCH_SIZE = 4
"""Windows per onnxruntime run. Measured here (benchmarks/throughput.py, 1000-character code windows,
length-sorted, 2 threads): runs of 2-4 at 26-30 windows/s, 8 at 28-29 with more spread, 16 at 27:
past a few windows, the activations of the layer norms and GELUs fall out of the cache."""


class OnnxEmbedder:
    """An exported model run with onnxruntime and tokenizers: no torch, loads in ~0.5 s.

    A query runs on one thread: next to a busy core that is the fast choice, as it was for torch.
    Windows run on ``bulk_threads``, sorted by token count into runs of ``bulk_batch_size`` so that
    little is padding (as sentence-transformers sorts them), and come back in the order given.
    """

    precision = "fp32"
    engine = "onnxruntime"

    def __init__(
        self,
        path: Path,
        fingerprint: ModelFingerprint,
        *,
        bulk_threads: int = 2,
        bulk_spinning: bool = False,
        bulk_batch_size: int = BULK_BATCH_SIZE,
    ) -> None:
        if bulk_batch_size <= 0:
            raise ValueError(f"batch size must be positive, got {bulk_batch_size}")
        self._tokenizer = load_tokenizer(fingerprint.folder, fingerprint.name)
        self._limit = fingerprint.max_seq_length
        if self._limit is not None:
            self._tokenizer.enable_truncation(self._limit)
        self._fingerprint = fingerprint
        self._counter: TokenCounter | None = None
        """A second tokenizer that never truncates, to count what is left unread; loaded on first use,
        since a warm start, whose extents are all cached, never needs it (25 ms of its start-up)."""
        self._path = path
        self._bulk_threads = bulk_threads
        self._bulk_spinning = bulk_spinning
        self._bulk_batch_size = bulk_batch_size
        self._session = self._open_session(1)
        self._bulk_session: Any = None
        """Opened on the first windows: a query-only session (most warm launches) never needs it."""
        self._inputs = {node.name for node in self._session.get_inputs()}
        width = self._session.get_outputs()[0].shape[1]
        self._dimension = width if isinstance(width, int) else int(self.encode_query("probe").shape[0])
        self._name = fingerprint.name

    def _open_session(self, threads: int, *, spinning: bool = False) -> Any:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        # No rewrites at load: the export was fused when it was made, and onnxruntime's extended
        # rewrites would fuse its layer norms back into SkipLayerNormalization, 3.5x slower here (see
        # raglens.onnx_graph). Its basic ones gained nothing measurable and cost ~40 ms of every start.
        # A plain export (the fuser failed on that model) runs unrewritten too: within 4% here.
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        # A spinning thread pool fought numpy on 2 cores: p90 query latency 90 ms instead of 9 ms.
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
        try:
            return onnxruntime.InferenceSession(str(self._path), options, providers=["CPUExecutionProvider"])
        except Exception as error:
            raise ModelLoadError(f"cannot load the ONNX export {self._path}: {error}") from error

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def max_seq_length(self) -> int | None:
        return self._limit

    @property
    def device(self) -> str:
        return "cpu"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        if self._bulk_session is None:
            self._bulk_session = self._open_session(self._bulk_threads, spinning=self._bulk_spinning)
        encodings = self._tokenizer.encode_batch(list(texts))
        order = sorted(range(len(encodings)), key=lambda row: len(encodings[row].ids))
        vectors = np.zeros((len(texts), self._dimension), dtype=np.float32)
        size = self._bulk_batch_size
        for start in range(0, len(order), size):
            rows = order[start : start + size]
            vectors[rows] = self._run(self._bulk_session, [encodings[row] for row in rows])
        return vectors

    def encode_query(self, query: str) -> np.ndarray:
        vector: np.ndarray = self._run(self._session, [self._tokenizer.encode(query)])[0]
        return vector

    def _run(self, session: Any, encodings: Sequence[Any]) -> np.ndarray:
        """The unit vectors of tokenised texts, padded on the right to the longest of them."""
        width = max(len(encoding.ids) for encoding in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        type_ids = np.zeros_like(ids)
        mask = np.zeros_like(ids)
        for position, encoding in enumerate(encodings):
            length = len(encoding.ids)
            ids[position, :length] = encoding.ids
            type_ids[position, :length] = encoding.type_ids
            mask[position, :length] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = type_ids
        output = session.run(None, feed)[0]
        return normalize_rows(np.asarray(output, dtype=np.float32))

    def reading_extents(self, texts: Sequence[str]) -> list[ReadingExtent]:
        if self._counter is None:
            self._counter = TokenCounter(self._fingerprint.folder, self._fingerprint.name, self._limit)
        return self._counter.reading_extents(texts)


def exportable(embedder: SentenceTransformerEmbedder, fingerprint: ModelFingerprint) -> bool:
    """Whether an export of ``fingerprint``'s files can stand in for ``embedder``: on the CPU, same limit.

    The export is always fp32, made from the model's files; it serves queries at any precision.
    """
    return embedder.device == "cpu" and fingerprint.max_seq_length == embedder.max_seq_length


def load_exported(cache_dir: Path, fingerprint: ModelFingerprint) -> OnnxEmbedder | None:
    """The model's export from the cache, or None if there is none yet (or it cannot be loaded).

    An export of the previous version is upgraded first (about a second, once): a warm start after an
    upgrade of raglens still needs no torch. Should that fail, the older export serves as it is.
    """
    path = export_path(cache_dir, fingerprint)
    if not path.exists():
        previous = export_path(cache_dir, fingerprint, EXPORT_VERSION - 1)
        if not previous.exists():
            return None
        if not (_upgrade(previous, path, fingerprint) or path.exists()):  # or another process did it
            path = previous
    try:
        return OnnxEmbedder(path, fingerprint)
    except ModelLoadError:
        return None


def _upgrade(previous: Path, target: Path, fingerprint: ModelFingerprint) -> bool:
    """Write the version-2 export ``previous`` as a version-3 one at ``target``; whether that worked.

    Needs no torch: the new graph is checked against ``previous``, which agreed with the model when
    it was made. The old file goes once the new one is in place.
    """
    try:
        import onnx

        model = onnx.load(str(previous))
        split = split_skip_layer_norms(model)
        with _partial_file(target.parent) as candidate:
            onnx.save(model, str(candidate))
            if split:
                expected = OnnxEmbedder(previous, fingerprint).encode(_PROBES)
                if _agreement(expected, candidate, fingerprint) < UPGRADE_AGREEMENT:
                    return False
            os.replace(candidate, target)
        previous.unlink(missing_ok=True)
    except Exception:  # any failure keeps the older export, which is exact too
        return False
    return True
