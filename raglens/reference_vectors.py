"""The bundled model's own fp32 vectors of the export's check texts, shipped with raglens.

An export is kept only if it reproduces the model's vectors of a few fixed texts. Computing them
needs sentence-transformers (7-20 s of import here); for the bundled model they were computed once
with it (``scripts/make_reference_vectors.py``) and ship as JSON, so that its first export, written
without torch (``raglens.bert_graph``), is checked against the model all the same. A test recomputes
them with sentence-transformers and compares. A file is used only for the exact model files it was
made from (their digest is its name) and the exact texts it holds.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from raglens.fingerprint import ModelFingerprint

REFERENCE_FOLDER = Path(__file__).resolve().parent / "references"
REFERENCE_FORMAT = 1


def reference_path(fingerprint: ModelFingerprint, folder: Path = REFERENCE_FOLDER) -> Path:
    """Where the reference vectors of the model with ``fingerprint``'s files are shipped."""
    return folder / f"{fingerprint.files_digest}.json"


def shipped_reference(
    fingerprint: ModelFingerprint, texts: tuple[str, ...], folder: Path = REFERENCE_FOLDER
) -> np.ndarray | None:
    """The model's shipped unit vectors of ``texts``, one row each; None unless shipped for exactly these."""
    try:
        document = json.loads(reference_path(fingerprint, folder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if document.get("format") != REFERENCE_FORMAT or tuple(document.get("texts", ())) != texts:
        return None
    vectors = np.asarray(document.get("vectors", []), dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(texts):
        return None
    return vectors


def write_reference(
    fingerprint: ModelFingerprint,
    texts: tuple[str, ...],
    vectors: np.ndarray,
    folder: Path = REFERENCE_FOLDER,
) -> Path:
    """Ship ``vectors`` (the model's fp32 unit vectors of ``texts``) for ``fingerprint``'s files."""
    document = {
        "format": REFERENCE_FORMAT,
        "model": fingerprint.name,
        "texts": list(texts),
        # float32 → float64 → JSON's shortest repr → float32 gives back the same bits.
        "vectors": [[float(value) for value in row] for row in np.asarray(vectors, dtype=np.float32)],
    }
    folder.mkdir(parents=True, exist_ok=True)
    target = reference_path(fingerprint, folder)
    target.write_text(json.dumps(document) + "\n", encoding="utf-8")
    return target
