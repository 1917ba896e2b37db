"""The bundled model written as an ONNX graph without torch: its shipped references, and a first run
that never imports torch."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from raglens.embedding import SentenceTransformerEmbedder
from raglens.fingerprint import fingerprint_model
from raglens.onnx_model import REFERENCE_TEXTS, exports_without_torch
from raglens.reference_vectors import shipped_reference
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.model


def test_the_shipped_reference_vectors_are_the_models_own(real_embedder: SentenceTransformerEmbedder) -> None:
    """If the bundled model or the check texts change, this fails until the references are made again
    (scripts/make_reference_vectors.py)."""
    fingerprint = fingerprint_model(None)
    assert fingerprint is not None
    shipped = shipped_reference(fingerprint, REFERENCE_TEXTS)
    assert shipped is not None, "no reference vectors ship for the bundled model's files"
    np.testing.assert_allclose(shipped, real_embedder.encode(list(REFERENCE_TEXTS)), atol=1e-6)


def test_only_the_bundled_model_at_its_own_limit_is_written_without_torch(tmp_path: Path) -> None:
    fingerprint = fingerprint_model(None)
    assert fingerprint is not None and exports_without_torch(fingerprint)
    assert not exports_without_torch(replace(fingerprint, max_seq_length=128)), "the references read 256"
    copy = tmp_path / "model"
    shutil.copytree(fingerprint.folder, copy)
    (copy / "vocab.txt").write_text((copy / "vocab.txt").read_text() + "extra\n")
    other = fingerprint_model(str(copy))
    assert other is not None and not exports_without_torch(other), "other files: no references ship"


def test_a_first_run_exports_and_embeds_without_importing_torch(tmp_path: Path) -> None:
    script = f"""
import sys
from pathlib import Path
from raglens.embedding_events import ModelChoice
from raglens.engine import Engines
from raglens.fingerprint import fingerprint_model

notes = []
engines = Engines(ModelChoice(), fingerprint_model(None), Path({str(tmp_path)!r}), on_note=notes.append)
windows = engines.for_windows(5000)
vectors = windows.encode(["def drain(queue):\\n    return queue.pop()"])
assert engines.for_queries() is windows and vectors.shape == (1, 384)
print(type(windows).__name__, [name for name in ("torch", "sentence_transformers") if name in sys.modules])
print(notes[0])
"""
    command = [sys.executable, "-c", script]
    result = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "OnnxEmbedder []", "neither torch nor sentence-transformers was imported"
    assert lines[1] == "writing all-MiniLM-L6-v2 as an ONNX graph once, with no torch to import"
