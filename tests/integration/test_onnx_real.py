"""The ONNX export of the bundled model against the model itself, and searching without torch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from raglens.corpus import CorpusOptions, load_corpus
from raglens.embedding import SentenceTransformerEmbedder
from raglens.embedding_events import CacheTrouble, EngineTrouble, ModelChoice, ModelReady
from raglens.embedding_process import EmbeddingProcess
from raglens.export_witness import (
    WITNESS_TEXTS,
    largest_difference,
    read_witness,
    write_witness,
)
from raglens.fingerprint import ModelFingerprint, fingerprint_model, sha256_of_file
from raglens.onnx_model import OnnxEmbedder, export_path, load_exported
from raglens.windows import WindowParams, cut_corpus, window_texts
from tests.conftest import REPO_ROOT, SAMPLE_CORPUS, copy_export

pytestmark = pytest.mark.model

QUERIES = [
    "what happens after a job is acknowledged?",
    "how are failed jobs retried?",
    "drain_pending_jobs",
    "Wie starte ich einen Worker?",
    "have you ever been to a five-star resort?",
]


@pytest.mark.parametrize("how", ["exported", "traced"])
def test_the_export_embeds_like_the_model(
    how: str, request: pytest.FixtureRequest, real_embedder: SentenceTransformerEmbedder
) -> None:
    """Both ways to export: the graph written from the weights (the bundled model's) and torch's trace."""
    cache_dir, fingerprint = request.getfixturevalue(how)
    onnx = OnnxEmbedder(export_path(cache_dir, fingerprint), fingerprint)
    assert (onnx.dimension, onnx.max_seq_length) == (real_embedder.dimension, real_embedder.max_seq_length)
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    texts = window_texts(corpus, cut_corpus(corpus, WindowParams()))
    windows_onnx, windows_torch = onnx.encode(texts), real_embedder.encode(texts)
    cosines = np.sum(windows_onnx * windows_torch, axis=1)
    assert cosines.min() >= 0.9999, f"least cosine {cosines.min():.6f}"
    assert onnx.reading_extents(texts) == real_embedder.reading_extents(texts)
    for query in QUERIES:
        by_onnx = windows_onnx @ onnx.encode_query(query)
        by_torch = windows_torch @ real_embedder.encode_query(query)
        assert float(onnx.encode_query(query) @ real_embedder.encode_query(query)) >= 0.9999
        assert list(np.argsort(-by_onnx, kind="stable")[:10]) == list(
            np.argsort(-by_torch, kind="stable")[:10]
        )


@pytest.mark.parametrize(("how", "layer_norms"), [("exported", 13), ("traced", 12)])
def test_the_export_runs_onnxruntimes_fused_kernels(
    how: str, layer_norms: int, request: pytest.FixtureRequest
) -> None:
    """The written graph uses them directly; the traced one gets them from onnxruntime's optimizer, which
    also fuses the embeddings' layer norm into EmbedLayerNormalization."""
    import onnx

    cache_dir, fingerprint = request.getfixturevalue(how)
    operators = [node.op_type for node in onnx.load(str(export_path(cache_dir, fingerprint))).graph.node]
    assert operators.count("Attention") == 6, "one fused attention per layer"
    assert operators.count("BiasGelu") == 6
    assert "SkipLayerNormalization" not in operators, "the fused layer norm is the slow kernel here"
    assert operators.count("LayerNormalization") == layer_norms


def _damage(export: Path, *, keep_time: bool = False) -> None:
    """Multiply 64 KB of the export's weights, at 75 % of the file, by -3 (issue 28's damage)."""
    before = export.stat()
    data = bytearray(export.read_bytes())
    start = int(len(data) * 0.75) & ~3
    with np.errstate(over="ignore", invalid="ignore"):  # what was NaN or huge stays so: damage is damage
        weights = np.frombuffer(bytes(data[start : start + 65536]), dtype="<f4") * np.float32(-3)
    data[start : start + 65536] = weights.astype("<f4").tobytes()
    export.write_bytes(bytes(data))
    if keep_time:  # as a bad disk would: the bytes change, the size and time do not
        os.utime(export, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_the_export_keeps_a_witness_and_proves_itself_each_open(
    exported: tuple[Path, ModelFingerprint], real_embedder: SentenceTransformerEmbedder
) -> None:
    cache_dir, fingerprint = exported
    witness = read_witness(export_path(cache_dir, fingerprint))
    assert witness is not None and witness.texts == WITNESS_TEXTS
    export = export_path(cache_dir, fingerprint)
    assert (witness.size, witness.sha256) == (export.stat().st_size, sha256_of_file(export))
    np.testing.assert_allclose(witness.vectors, real_embedder.encode(list(WITNESS_TEXTS)), atol=1e-6)
    warnings: list[str] = []
    assert load_exported(cache_dir, fingerprint, on_warning=warnings.append) is not None
    assert warnings == []


@pytest.mark.parametrize("where", ["weights at 75%", "ten rare tokens' embedding rows"])
def test_damage_that_keeps_the_files_size_and_time_is_caught_by_its_bytes(
    exported: tuple[Path, ModelFingerprint], tmp_path: Path, where: str
) -> None:
    """A bad disk keeps a file's size and time. Damage in rows of the token table that no witness text
    reads (token ids 26030-26039, 1.5 KB each) changes no witness vector: only the bytes tell."""
    _, fingerprint = exported
    export = copy_export(exported, tmp_path)
    if where.startswith("weights"):
        _damage(export, keep_time=True)
    else:
        before = export.stat()
        data = bytearray(export.read_bytes())
        table = _token_table_offset(data)
        start = table + 26030 * 384 * 4
        data[start : start + 10 * 384 * 4] = (
            np.random.default_rng(5).standard_normal(3840).astype("<f4").tobytes()
        )
        export.write_bytes(bytes(data))
        os.utime(export, ns=(before.st_atime_ns, before.st_mtime_ns))
        onnx = OnnxEmbedder(export, fingerprint)
        witness = read_witness(export)
        assert witness is not None
        same = largest_difference(witness.vectors, onnx.whole_vectors(witness.texts))
        assert same <= 1e-5, "the witness texts cannot see this damage"
    warnings: list[str] = []
    assert load_exported(tmp_path, fingerprint, on_warning=warnings.append) is None
    assert len(warnings) == 1 and "its bytes are not the ones checked when it was made" in warnings[0]
    assert not export.exists() and export.with_name(export.name + ".rejected").exists()


def _token_table_offset(data: bytearray) -> int:
    """Where the word-embedding table's float32 values start in the export's bytes."""
    import onnx

    model = onnx.load_from_string(bytes(data))
    (table,) = [t for t in model.graph.initializer if t.dims == [30522, 384]]
    offset = bytes(data).find(table.raw_data[:4096])
    assert offset > 0
    return offset


def test_vectors_off_the_models_are_caught_though_the_bytes_are_the_ones_checked(
    exported: tuple[Path, ModelFingerprint], tmp_path: Path
) -> None:
    """What an export made by another onnxruntime, or run on another CPU, would give: its own bytes,
    other vectors. Here the witness's vectors are moved by 1e-4 instead."""
    _, fingerprint = exported
    export = copy_export(exported, tmp_path)
    witness = read_witness(export)
    assert witness is not None
    write_witness(export, replace(witness, vectors=witness.vectors + np.float32(1e-4)))
    warnings: list[str] = []
    assert load_exported(tmp_path, fingerprint, on_warning=warnings.append) is None
    assert len(warnings) == 1 and "its vectors differ from the model's by up to 0.0001" in warnings[0]


def test_an_export_touched_or_copied_with_its_bytes_intact_is_used(
    exported: tuple[Path, ModelFingerprint], tmp_path: Path
) -> None:
    _, fingerprint = exported
    export = copy_export(exported, tmp_path)
    os.utime(export, ns=(10**18, 10**18))
    warnings: list[str] = []
    assert load_exported(tmp_path, fingerprint, on_warning=warnings.append) is not None
    assert warnings == []


def test_a_truncated_export_is_set_aside_not_silently_replaced(
    exported: tuple[Path, ModelFingerprint], tmp_path: Path
) -> None:
    _, fingerprint = exported
    export = copy_export(exported, tmp_path)
    with export.open("r+b") as handle:
        handle.truncate(export.stat().st_size // 2)
    warnings: list[str] = []
    assert load_exported(tmp_path, fingerprint, on_warning=warnings.append) is None
    assert len(warnings) == 1 and "failed its check" in warnings[0]


def test_a_damaged_export_never_ranks_nor_stores_and_a_new_one_replaces_it(
    exported: tuple[Path, ModelFingerprint], tmp_path: Path
) -> None:
    """Issue 28's report: the damaged export ranked README.md first (0.133) as exact fp32, and stored
    what it embedded. Now it is caught at open and set aside; a fresh export is written at once (the
    bundled model's graph needs no torch), proves itself against the model's vectors, and ranks."""
    export = copy_export(exported, tmp_path)
    _damage(export)
    argv = ["search", str(SAMPLE_CORPUS), QUERIES[1], "--json", "-q", "--cache-dir", str(tmp_path)]
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    command = [sys.executable, "-c", WARM_SEARCH, json.dumps(argv)]
    run = subprocess.run(command, capture_output=True, text=True, env=environment, check=False)
    assert run.returncode == 0, run.stderr
    warnings = [line for line in run.stderr.splitlines() if "failed its check" in line]
    assert len(warnings) == 1, run.stderr
    assert "Traceback" not in run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["document"]["model"]["engine"] == "onnxruntime" and not report["torch"]
    assert export.with_name(export.name + ".rejected").exists(), "the damaged one is kept aside"
    top = report["document"]["hits"][0]
    assert (top["path"], round(top["score"], 3)) == ("docs/glossary.md", 0.463), "the model's own ranking"
    assert export.exists() and read_witness(export) is not None, "a new export was made and kept"
    assert load_exported(tmp_path, exported[1]) is not None, "and it passes"
    again = subprocess.run(command, capture_output=True, text=True, env=environment, check=False)
    document = json.loads(again.stdout.strip().splitlines()[-1])["document"]
    assert document["model"]["engine"] == "onnxruntime" and document["cache"]["embedded"] == 0
    assert document["hits"][0]["score"] == pytest.approx(top["score"], abs=1e-5), (
        "the stored vectors are exact"
    )


WARM_SEARCH = """
import contextlib, io, json, sys
from raglens.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(json.loads(sys.argv[1]))
report = {'code': code, 'torch': 'torch' in sys.modules, 'document': json.loads(out.getvalue())}
print(json.dumps(report))
"""


@pytest.mark.parametrize(
    ("cpu_flags", "precision"),
    [("avx512f avx512_bf16 amx_bf16", None), ("avx512f avx512_vnni", None), ("avx512f avx512_bf16", "bf16")],
    ids=["bf16-native-cpu-default", "cpu-without-bf16-default", "bf16-asked-for"],
)
def test_a_warm_search_never_imports_torch(
    exported: tuple[Path, ModelFingerprint], cpu_flags: str, precision: str | None
) -> None:
    """Whatever the CPU offers, the default is fp32; a warm search, at any precision, runs without torch."""
    cache_dir, _ = exported
    argv = ["search", str(SAMPLE_CORPUS), QUERIES[0], "--json", "-q", "--cache-dir", str(cache_dir)]
    argv += ["--precision", precision] if precision else []
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "RAGLENS_CPU_FLAGS": cpu_flags}
    for _ in range(2):  # the first fills the cache with the windows' vectors; the second needs nothing
        command = [sys.executable, "-c", WARM_SEARCH, json.dumps(argv)]
        run = subprocess.run(command, capture_output=True, text=True, env=environment, check=False)
        assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["code"] == 0
    assert report["torch"] is False, "a warm search ran through onnxruntime alone"
    model = report["document"]["model"]
    assert (model["precision"], model["exact"]) == ((precision or "fp32"), precision is None)
    assert (model["engine"], model["window_engine"]) == ("onnxruntime", None)
    assert report["document"]["cache"]["embedded"] == 0
    assert report["document"]["hits"][0]["path"] == "docs/queues.md"


def test_the_embedding_process_starts_on_the_export(exported: tuple[Path, ModelFingerprint]) -> None:
    cache_dir, _ = exported
    process = EmbeddingProcess(ModelChoice(device="cpu"), cache_dir=str(cache_dir))
    try:
        ready = process.wait_until_ready(timeout=60)
        assert isinstance(ready, ModelReady)
        assert (ready.engine, ready.precision, ready.device) == ("onnxruntime", "fp32", "cpu")
    finally:
        process.close()


def _model_without_written_graph(folder: Path) -> Path:
    """A copy of the bundled model with one more vocabulary line: no reference vectors ship for its
    files, so it is exported as every other model is, traced through torch after its windows."""
    bundled = fingerprint_model(None)
    assert bundled is not None
    shutil.copytree(bundled.folder, folder)
    (folder / "vocab.txt").write_text((folder / "vocab.txt").read_text() + "extra\n")
    return folder


@pytest.mark.parametrize("how", ["written", "traced"])
def test_an_explorer_closed_while_it_exports_leaves_no_half_written_export(tmp_path: Path, how: str) -> None:
    """Issue 28: closing mid-export left `tmp*.partial` files (44 MB, and a 0-byte one) in the cache.
    The bundled model's graph is written as the process starts; another model's is traced after its
    windows, in a thread."""
    model = None if how == "written" else str(_model_without_written_graph(tmp_path / "model"))
    cache = tmp_path / "cache"
    process = EmbeddingProcess(ModelChoice(model=model, device="cpu"), cache_dir=str(cache))
    folder = cache / "onnx"
    try:
        if how == "traced":
            process.wait_until_ready(timeout=300)
            process.index_windows(1, ["A queue holds jobs.", "def lease(self):\n    return None\n"])
        deadline = time.monotonic() + 300
        while not list(folder.glob("*.partial")):
            assert time.monotonic() < deadline, "no export started"
            process.next_event(timeout=0.01)
    finally:
        process.close()
    assert not process.is_alive()
    assert list(folder.glob("*.partial")) == [], "the stopped process removed what it had half written"
    if list(folder.glob("*.onnx")):  # the written graph may have been finished before the stop was read
        assert how == "written", "a traced export is abandoned"
        assert load_exported(cache, fingerprint_model(None)) is not None  # type: ignore[arg-type]


def test_the_embedding_process_says_its_export_failed_and_starts_on_a_new_one(
    exported: tuple[Path, ModelFingerprint], tmp_path: Path
) -> None:
    export = copy_export(exported, tmp_path)
    _damage(export)
    process = EmbeddingProcess(ModelChoice(device="cpu"), cache_dir=str(tmp_path))
    troubles: list[CacheTrouble | EngineTrouble] = []
    try:
        ready = process.wait_until_ready(timeout=300, troubles=troubles)
    finally:
        process.close()
    assert ready.engine == "onnxruntime", "a fresh export, written at once, replaced the damaged one"
    assert [type(trouble) for trouble in troubles] == [EngineTrouble]
    assert "failed its check" in troubles[0].message
    assert export.with_name(export.name + ".rejected").exists()
    assert load_exported(tmp_path, exported[1]) is not None, "the new export passes its check"
