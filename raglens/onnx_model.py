"""The model as one ONNX graph (transformer, pooling, normalisation), run without torch.

Importing sentence-transformers takes 7-20 s here; onnxruntime and tokenizers load in ~0.5 s and
embed a query in ~7 ms, with vectors equal to sentence-transformers' (cosine 0.99999+). raglens
exports each model once, from sentence-transformers, into the cache, and checks the export
against the model before keeping it, and again, against its witness, every time it is opened.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from raglens.attribution import TokenStates, Unexplained, no_explanation_for, token_spans
from raglens.embedding import SentenceTransformerEmbedder, normalize_rows
from raglens.embedding_events import ReadingExtent
from raglens.errors import ModelLoadError
from raglens.export_witness import (
    WITNESS_TEXTS,
    WITNESS_TOLERANCE,
    ExportWitness,
    largest_difference,
    read_witness,
    witness_of,
    witness_path,
    write_witness,
)
from raglens.fingerprint import ModelFingerprint, max_seq_length_of, sha256_of_file
from raglens.locations import ONNX_FOLDER
from raglens.onnx_graph import fuse
from raglens.tokens import TokenCounter, load_tokenizer

EXPORT_VERSION = 4
"""Bump when the exported graph changes, so older exports are redone (2: onnxruntime's fusions applied;
3: its skip layer norms split again; 4: the token vectors the pooling averages are a second output,
for "why this score"). An older export is removed once a new one is made."""
POOLED_OUTPUT = "embedding"
"""The graph's first output: each text's pooled vector, before normalisation."""
TOKEN_STATES_OUTPUT = "token_states"
"""Its second: the token vectors the pooling averages (padding included; the mask says which count).
A run that asks only for the first computes the same, and copies nothing more."""
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


class ExportRejected(Exception):
    """An export failed its check against its witness: it must neither rank nor store a vector."""


Warn = Callable[[str], None]


def _ignore(message: str) -> None:
    """The default listener, which drops what it is told."""


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


REFERENCE_TEXTS = (*_PROBES, *WITNESS_TEXTS)
"""What an export must reproduce to be kept: the probes, then the texts its witness keeps."""


def exports_without_torch(fingerprint: ModelFingerprint) -> bool:
    """Whether the model can be exported without torch: a BERT with its reference vectors shipped."""
    return _writable(fingerprint) is not None


def _writable(fingerprint: ModelFingerprint) -> tuple[str, np.ndarray] | None:
    """The pooling and shipped reference vectors of a model whose graph raglens writes; None otherwise."""
    from raglens.bert_graph import GraphUnsupported, bert_shape
    from raglens.reference_vectors import shipped_reference

    if fingerprint.max_seq_length != max_seq_length_of(fingerprint.folder):
        return None  # the shipped vectors were read at the model's own limit
    reference = shipped_reference(fingerprint, REFERENCE_TEXTS)
    if reference is None:
        return None
    try:
        bert_shape(fingerprint.folder)
        pooling, _ = _pooling(fingerprint.folder)
    except (GraphUnsupported, ExportUnsupported):
        return None
    return pooling, reference


def export_model(fingerprint: ModelFingerprint, target: Path, *, trace: bool = False) -> None:
    """Export the model at ``fingerprint.folder`` to ``target`` and check it against the model's vectors.

    Written without torch (about three seconds with its check, here) where
    :func:`exports_without_torch`; traced through torch otherwise, or with ``trace`` (seconds, after
    sentence-transformers' import). The file appears only once it agrees with the model, so a crash
    never leaves a half-written one.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned_exports(target.parent)
    with _partial_file(target.parent) as plain, _partial_file(target.parent) as fused:
        written = None if trace else _written(fingerprint, fused)
        if written is not None:
            _keep_agreeing(fingerprint, [fused], written, target)
        else:
            candidates = _traced(fingerprint, plain, fused)
            _keep_agreeing(fingerprint, candidates, model_reference_vectors(fingerprint), target)


def _written(fingerprint: ModelFingerprint, target: Path) -> np.ndarray | None:
    """Write the model's graph to ``target`` without torch; the shipped vectors to check it by, or None
    when it cannot be written so (then it is traced)."""
    from raglens.bert_graph import GraphUnsupported, write_bert_graph

    writable = _writable(fingerprint)
    if writable is None:
        return None
    pooling, reference = writable
    try:
        write_bert_graph(fingerprint.folder, target, pooling, POOLED_OUTPUT, TOKEN_STATES_OUTPUT)
    except GraphUnsupported:
        return None
    return reference


def _traced(fingerprint: ModelFingerprint, plain: Path, fused: Path) -> list[Path]:
    """Trace the model through torch into ``plain``, fuse that into ``fused``; the graphs, fastest first."""
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
                return hidden[:, 0], hidden
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9), hidden

    names = ["input_ids", "attention_mask", *(["token_type_ids"] if accepts_token_types else [])]
    sample = tuple(torch.ones((2, 16), dtype=torch.long) for _ in names)
    axes = {name: {0: "batch", 1: "sequence"} for name in names} | {
        POOLED_OUTPUT: {0: "batch"},
        TOKEN_STATES_OUTPUT: {0: "batch", 1: "sequence"},
    }
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer advice; the agreement check decides
        torch.onnx.export(
            Pooled(),
            sample,
            str(plain),
            input_names=names,
            output_names=[POOLED_OUTPUT, TOKEN_STATES_OUTPUT],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    config = transformer.config
    if fuse(plain, fused, config.num_attention_heads, config.hidden_size):
        return [fused, plain]  # the fused one is faster: kept only if it agrees with the model as well
    return [plain]


def _keep_agreeing(
    fingerprint: ModelFingerprint, candidates: list[Path], reference: np.ndarray, target: Path
) -> None:
    """Move the first of ``candidates`` that reproduces ``reference`` (the model's vectors of
    REFERENCE_TEXTS) to ``target``, its witness beside it; ExportUnsupported when none does."""
    expected, witnessed = reference[: len(_PROBES)], reference[len(_PROBES) :]
    failures = []
    for candidate in candidates:
        agreement = _agreement(expected, candidate, fingerprint)
        # The check every later open makes, made now, so an export kept is one that will pass it.
        difference = largest_difference(witnessed, _witness_vectors(candidate, fingerprint))
        if agreement >= AGREEMENT and difference <= WITNESS_TOLERANCE:
            write_witness(target, witness_of(candidate, WITNESS_TEXTS, witnessed))
            try:
                os.replace(candidate, target)
            except OSError:  # abandoned meanwhile (the process is stopping): no witness of nothing
                witness_path(target).unlink(missing_ok=True)
                raise
            _remove_older_versions(target.parent, fingerprint)
            return
        failures.append(f"{candidate.name}: cosine {agreement:.6f}, witness off by {difference:.1e}")
    raise ExportUnsupported(f"the export does not agree with the model ({'; '.join(failures)})")


def _remove_older_versions(folder: Path, fingerprint: ModelFingerprint) -> None:
    """Delete the exports of earlier versions (~90 MB each) and their witnesses: never opened again."""
    for version in range(1, EXPORT_VERSION):
        older = export_path(folder.parent, fingerprint, version)
        for path in (older, witness_path(older)):
            with contextlib.suppress(OSError):
                path.unlink()


_PARTIAL_PREFIX = "export-"
_open_partials: set[str] = set()
"""This process's half-written exports, removed by :func:`abandon_exports` when it stops early."""


@contextlib.contextmanager
def _partial_file(folder: Path) -> Iterator[Path]:
    """A fresh ``export-<pid>-*.partial`` file in ``folder``, deleted on the way out unless renamed away.

    The pid in its name lets a later export tell a file whose writer was killed from one being written.
    """
    handle, name = tempfile.mkstemp(dir=folder, prefix=f"{_PARTIAL_PREFIX}{os.getpid()}-", suffix=".partial")
    os.close(handle)
    _open_partials.add(name)
    try:
        yield Path(name)
    finally:
        _open_partials.discard(name)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)


def abandon_exports() -> None:
    """Delete the half-written exports of this process: it stops before its export thread is done."""
    for name in list(_open_partials):
        with contextlib.suppress(OSError):
            os.unlink(name)  # the writer, if still writing, writes on into a file no one can see


def _writer_is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def _remove_abandoned_exports(folder: Path, older_than_s: float = 3600) -> None:
    """Delete half-written exports (~90 MB each) whose writer is gone, or that are over an hour old.

    A file from before the pid was in the name is taken as abandoned after ten minutes: an export
    takes well under a minute here.
    """
    now = time.time()
    for leftover in folder.glob("*.partial"):
        parts = leftover.name.split("-")
        writer = int(parts[1]) if leftover.name.startswith(_PARTIAL_PREFIX) and parts[1].isdigit() else None
        with contextlib.suppress(OSError):
            age = now - leftover.stat().st_mtime
            gone = writer is not None and writer != os.getpid() and not _writer_is_alive(writer)
            if gone or age > older_than_s or (writer is None and age > 600):
                leftover.unlink()


def model_reference_vectors(fingerprint: ModelFingerprint) -> np.ndarray:
    """The model's own fp32 unit vectors of REFERENCE_TEXTS, through sentence-transformers."""
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(fingerprint.folder), device="cpu")
    return normalize_rows(reference.encode(list(REFERENCE_TEXTS), convert_to_numpy=True))


def _witness_vectors(exported: Path, fingerprint: ModelFingerprint) -> np.ndarray:
    """The vectors the graph at ``exported`` gives the witness texts, as every open computes them."""
    return OnnxEmbedder(exported, fingerprint).whole_vectors(WITNESS_TEXTS)


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
        session = self._windows_session()
        encodings = self._tokenizer.encode_batch(list(texts))
        order = sorted(range(len(encodings)), key=lambda row: len(encodings[row].ids))
        vectors = np.zeros((len(texts), self._dimension), dtype=np.float32)
        size = self._bulk_batch_size
        for start in range(0, len(order), size):
            rows = order[start : start + size]
            vectors[rows] = self._run(session, [encodings[row] for row in rows])
        return vectors

    def encode_query(self, query: str) -> np.ndarray:
        vector: np.ndarray = self._run(self._session, [self._tokenizer.encode(query)])[0]
        return vector

    def whole_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """The unit vectors of short ``texts`` read whole, whatever the token limit (one export serves
        every limit, and its witness was taken at the model's own), each run alone, unpadded."""
        self._tokenizer.no_truncation()
        try:
            encodings = self._tokenizer.encode_batch(list(texts))
        finally:
            if self._limit is not None:
                self._tokenizer.enable_truncation(self._limit)
        if not encodings:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return np.concatenate([self._run(self._session, [encoding]) for encoding in encodings])

    def token_states(self, text: str) -> TokenStates | Unexplained:
        """The token vectors the export's mean pooling averages for ``text`` (cut at the model's limit).

        From the windows' session, which gives them as its second output; each call checks that they
        pool to the export's own vector from the same run.
        """
        pooling, _ = _pooling(self._fingerprint.folder)
        if pooling != "mean":
            return no_explanation_for(pooling)
        session = self._windows_session()
        if TOKEN_STATES_OUTPUT not in {output.name for output in session.get_outputs()}:
            return Unexplained("this ONNX export has no token-vector output")
        encoding = self._tokenizer.encode(text)
        pooled, states = session.run([POOLED_OUTPUT, TOKEN_STATES_OUTPUT], self._feed([encoding]))
        vectors = np.asarray(states[0], dtype=np.float32)
        mean = vectors.astype(np.float64).mean(axis=0)
        if not np.allclose(mean, pooled[0], rtol=0, atol=1e-5 * max(float(np.linalg.norm(mean)), 1e-12)):
            return Unexplained("the export's token vectors do not pool to its own vector")
        spans = token_spans(encoding.special_tokens_mask, encoding.offsets)
        return TokenStates(text, tuple(encoding.tokens), spans, vectors)

    def _windows_session(self) -> Any:
        """The session for windows (and token vectors), opened on first use: a warm start whose windows
        are all cached never needs it (~100 MB)."""
        if self._bulk_session is None:
            self._bulk_session = self._open_session(self._bulk_threads, spinning=self._bulk_spinning)
        return self._bulk_session

    def _feed(self, encodings: Sequence[Any]) -> dict[str, np.ndarray]:
        """The graph's inputs for tokenised texts, padded on the right to the longest of them."""
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
        return feed

    def _run(self, session: Any, encodings: Sequence[Any]) -> np.ndarray:
        """The unit vectors of tokenised texts, padded on the right to the longest of them."""
        output = session.run([POOLED_OUTPUT], self._feed(encodings))[0]
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


def load_exported(
    cache_dir: Path, fingerprint: ModelFingerprint, *, on_warning: Warn = _ignore, on_note: Warn = _ignore
) -> OnnxEmbedder | None:
    """The model's export from the cache once it has proved itself, or None if there is none to use.

    An export that fails its witness (damaged bytes, vectors off the model's) is set aside and
    ``on_warning`` says so in one line; the caller then embeds with sentence-transformers, which makes
    a new export. One without a witness (made by an older raglens) is not used, and ``on_note`` says
    that a new one will be made.
    """
    path = export_path(cache_dir, fingerprint)
    if not path.exists():
        return None
    witness = read_witness(path)
    if witness is None:
        on_note(f"the ONNX export {path.name} has no witness to check it by; it is made again")
        return None
    try:
        return open_proven(path, fingerprint, witness)
    except ExportRejected as rejected:
        if not path.exists():
            return None  # set aside or replaced by another raglens meanwhile: it said so, or it was new
        aside = set_aside(path)
        where = f"moved it to {aside.name}" if aside is not None else "could not move it"
        on_warning(
            f"the ONNX export of {fingerprint.name} failed its check ({rejected}); {where}, and the "
            "model embeds through sentence-transformers until a new export passes"
        )
        return None


def open_proven(path: Path, fingerprint: ModelFingerprint, witness: ExportWitness) -> OnnxEmbedder:
    """Open the export at ``path`` and prove it against ``witness``, or raise ExportRejected.

    Its bytes are hashed on every open (a bad disk changes bytes and keeps the file's time), in a
    thread while onnxruntime loads it; its vectors of the witness texts are computed then (a few ms).
    """
    try:
        size = path.stat().st_size
    except OSError as error:
        raise ExportRejected(f"it cannot be read ({error.strerror or error})") from None
    if size != witness.size:
        raise ExportRejected(
            f"it has {size:,} bytes where the one checked when it was made had {witness.size:,}"
        )
    hashed: list[str | OSError] = []

    def hash_bytes() -> None:
        try:
            hashed.append(sha256_of_file(path))
        except OSError as error:
            hashed.append(error)

    hasher = threading.Thread(target=hash_bytes, name="raglens-export-hash", daemon=True)
    hasher.start()
    embedder: OnnxEmbedder | None = None
    difference, load_error = float("inf"), ""
    try:
        embedder = OnnxEmbedder(path, fingerprint)
        difference = largest_difference(witness.vectors, embedder.whole_vectors(witness.texts))
    except ModelLoadError as error:
        load_error = str(error).splitlines()[0]
    finally:
        hasher.join()
    (digest,) = hashed
    if isinstance(digest, OSError):
        raise ExportRejected(f"it cannot be read ({digest.strerror or digest})")
    if digest != witness.sha256:  # the most precise verdict: said before what the bytes then did
        raise ExportRejected("its bytes are not the ones checked when it was made")
    if embedder is None:
        raise ExportRejected(load_error)
    if difference > WITNESS_TOLERANCE:
        raise ExportRejected(
            f"its vectors differ from the model's by up to {difference:.2g}; at most {WITNESS_TOLERANCE:g} "
            "is exact"
        )
    return embedder


def set_aside(path: Path) -> Path | None:
    """Rename a rejected export (and its witness) to ``*.rejected``, replacing an earlier one; the new
    name, or None when it could not be moved (then it is deleted, if it can be)."""
    aside = path.with_name(path.name + ".rejected")
    try:
        os.replace(path, aside)
    except OSError:
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    with contextlib.suppress(OSError):
        os.replace(witness_path(path), witness_path(aside))
    return aside
