"""What an ONNX export must reproduce to be trusted: the model's own vectors of a few fixed texts.

An export is checked against sentence-transformers when it is made; a file damaged afterwards (a bad
disk, a careless edit, a copy from a machine with another onnxruntime) would otherwise be trusted
for ever, rank garbage under the label "exact" and have its vectors stored. The witness is kept
beside the export, as JSON: the texts, the model's fp32 vectors of them, and the export's size and
sha256. Every open compares the export against it, bytes and vectors (see
``raglens.onnx_model.open_proven``); no torch is needed for that.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from raglens.fingerprint import sha256_of_file

WITNESS_TEXTS = ("def drain(queue): # how are failed jobs retried? Wie starte ich einen Worker? 工作は",)
"""One short text (under 40 tokens, so no token limit cuts it) in code, prose and two other scripts:
every byte of the export is hashed besides, so the vectors need only show that this onnxruntime on this
CPU computes what the model does (6 ms on one thread here; each further text costs 3-5 ms)."""

WITNESS_TOLERANCE = 1e-5
"""The most any component of an export's witness vector may differ from the model's fp32 one.

Measured here: a sound export differs by at most 1.3e-7 (fp32 sums in another order); 64 KB of
its weights multiplied by -3 by 0.24.
"""

WITNESS_FORMAT = 2
"""2: no modification time (every open hashes the bytes: bit rot keeps the time)."""


@dataclass(frozen=True, eq=False)
class ExportWitness:
    """The model's vectors of the witness texts, and the bytes of the export they vouch for."""

    texts: tuple[str, ...]
    vectors: np.ndarray
    """The model's own unit vectors of ``texts`` (fp32, sentence-transformers), one row each."""
    sha256: str
    size: int


def witness_path(export: Path) -> Path:
    """Where the witness of ``export`` is kept: beside it."""
    return export.with_name(export.name + ".witness.json")


def witness_of(export: Path, texts: tuple[str, ...], vectors: np.ndarray) -> ExportWitness:
    """The witness of the file at ``export``, whose vectors of ``texts`` the model gives as ``vectors``."""
    rows = np.asarray(vectors, dtype=np.float32)
    return ExportWitness(texts, rows, sha256_of_file(export), export.stat().st_size)


def write_witness(export: Path, witness: ExportWitness) -> None:
    """Keep ``witness`` beside ``export``, whole or not at all (written aside, then renamed)."""
    document = {
        "format": WITNESS_FORMAT,
        "texts": list(witness.texts),
        # float32 → float64 → JSON's shortest repr → float32 gives back the same bits.
        "vectors": [[float(value) for value in row] for row in witness.vectors],
        "sha256": witness.sha256,
        "size": witness.size,
    }
    target = witness_path(export)
    handle, name = tempfile.mkstemp(dir=target.parent, prefix=".witness-", suffix=".partial")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(document, file)
        os.replace(name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise


def read_witness(export: Path) -> ExportWitness | None:
    """The witness kept beside ``export``, or None when there is none or it cannot be read whole."""
    try:
        document = json.loads(witness_path(export).read_text(encoding="utf-8"))
        if document.get("format") != WITNESS_FORMAT:
            return None
        texts = tuple(str(text) for text in document["texts"])
        vectors = np.asarray(document["vectors"], dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(texts) or not texts:
            return None
        return ExportWitness(texts, vectors, str(document["sha256"]), int(document["size"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def largest_difference(expected: np.ndarray, produced: np.ndarray) -> float:
    """The largest absolute difference of any component; infinite when the shapes differ or any is NaN."""
    if expected.shape != produced.shape:
        return float("inf")
    difference = np.abs(expected.astype(np.float64) - produced.astype(np.float64))
    if not np.isfinite(difference).all():
        return float("inf")
    return float(difference.max(initial=0.0))
