"""The ONNX export of the bundled model against the model itself, and searching without torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from raglens.corpus import CorpusOptions, load_corpus
from raglens.embedding import SentenceTransformerEmbedder
from raglens.embedding_events import ModelChoice, ModelReady
from raglens.embedding_process import EmbeddingProcess
from raglens.fingerprint import ModelFingerprint, fingerprint_model
from raglens.onnx_model import EXPORT_VERSION, OnnxEmbedder, export_model, export_path, load_exported
from raglens.windows import WindowParams, cut_corpus, window_texts
from tests.conftest import REPO_ROOT, SAMPLE_CORPUS

pytestmark = pytest.mark.model

QUERIES = [
    "what happens after a job is acknowledged?",
    "how are failed jobs retried?",
    "drain_pending_jobs",
    "Wie starte ich einen Worker?",
    "have you ever been to a five-star resort?",
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ModelFingerprint]:
    cache_dir = tmp_path_factory.mktemp("onnx-cache")
    fingerprint = fingerprint_model(None)
    assert fingerprint is not None
    target = export_path(cache_dir, fingerprint)
    export_model(fingerprint, target)
    assert target.exists() and not list(target.parent.glob("*.partial"))
    return cache_dir, fingerprint


def test_the_export_embeds_like_the_model(
    exported: tuple[Path, ModelFingerprint], real_embedder: SentenceTransformerEmbedder
) -> None:
    cache_dir, fingerprint = exported
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


def test_the_export_is_fused_by_onnxruntimes_optimizer(exported: tuple[Path, ModelFingerprint]) -> None:
    import onnx

    cache_dir, fingerprint = exported
    operators = [node.op_type for node in onnx.load(str(export_path(cache_dir, fingerprint))).graph.node]
    assert operators.count("Attention") == 6, "one fused attention per layer"
    assert operators.count("BiasGelu") == 6
    assert "SkipLayerNormalization" not in operators, "the fused layer norm is the slow kernel here"
    assert operators.count("LayerNormalization") == 12


def test_an_export_of_the_previous_version_is_upgraded_without_torch(
    exported: tuple[Path, ModelFingerprint], tmp_path: Path, real_embedder: SentenceTransformerEmbedder
) -> None:
    """A version-2 export (skip layer norms fused, as onnxruntime fuses them) becomes a version-3 one."""
    import onnx
    import onnxruntime

    cache_dir, fingerprint = exported
    previous = export_path(tmp_path, fingerprint, EXPORT_VERSION - 1)
    previous.parent.mkdir(parents=True)
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(previous)  # onnxruntime writes the graph it fused
    onnxruntime.InferenceSession(str(export_path(cache_dir, fingerprint)), options)
    assert "SkipLayerNormalization" in {node.op_type for node in onnx.load(str(previous)).graph.node}
    upgrade = f"""
import sys
from pathlib import Path
from raglens.fingerprint import fingerprint_model
from raglens.onnx_model import load_exported
embedder = load_exported(Path({str(tmp_path)!r}), fingerprint_model(None))
assert embedder is not None
assert "torch" not in sys.modules
"""
    run = subprocess.run([sys.executable, "-c", upgrade], capture_output=True, text=True, cwd=REPO_ROOT)
    assert run.returncode == 0, run.stderr
    assert [path.name for path in previous.parent.iterdir()] == [export_path(tmp_path, fingerprint).name]
    upgraded = load_exported(tmp_path, fingerprint)
    assert upgraded is not None
    operators = {node.op_type for node in onnx.load(str(export_path(tmp_path, fingerprint))).graph.node}
    assert "SkipLayerNormalization" not in operators and "LayerNormalization" in operators
    texts = ["how are failed jobs retried?", "def drain(queue):\n    return queue.pop()\n" * 40]
    cosines = np.sum(upgraded.encode(texts) * real_embedder.encode(texts), axis=1)
    assert cosines.min() >= 0.9999


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
