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
from raglens.embedding_events import ModelReady
from raglens.embedding_process import EmbeddingProcess
from raglens.fingerprint import ModelFingerprint, fingerprint_model
from raglens.onnx_model import OnnxEmbedder, export_model, export_path
from raglens.pipeline import cut_corpus, window_texts
from raglens.windows import WindowParams
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


def test_a_warm_search_never_imports_torch(exported: tuple[Path, ModelFingerprint], tmp_path: Path) -> None:
    cache_dir, _ = exported
    argv = ["search", str(SAMPLE_CORPUS), QUERIES[0], "--json", "-q", "--cache-dir", str(cache_dir)]
    script = (
        "import contextlib, io, json, sys\n"
        "from raglens.cli.main import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    code = main({argv!r})\n"
        "report = {'code': code, 'torch': 'torch' in sys.modules, 'document': json.loads(out.getvalue())}\n"
        "print(json.dumps(report))\n"
    )
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    for _ in range(2):  # the first fills the cache with the windows' vectors; the second needs nothing
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment)
        assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["code"] == 0
    assert report["torch"] is False, "a warm search ran through onnxruntime alone"
    assert report["document"]["cache"]["embedded"] == 0
    assert report["document"]["hits"][0]["path"] == "docs/queues.md"


def test_the_embedding_process_starts_on_the_export(exported: tuple[Path, ModelFingerprint]) -> None:
    cache_dir, fingerprint = exported
    process = EmbeddingProcess(cache_dir=str(cache_dir), fingerprint=fingerprint)
    try:
        ready = process.wait_until_ready(timeout=60)
        assert isinstance(ready, ModelReady) and "onnxruntime" in ready.device
    finally:
        process.close()
