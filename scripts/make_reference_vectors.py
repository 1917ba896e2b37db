"""Compute the bundled model's reference vectors with sentence-transformers and ship them with raglens.

Usage: uv run python scripts/make_reference_vectors.py
Run it when the bundled model's files or the export's check texts change; the test
tests/integration/test_bert_graph.py fails until it is run.
"""

from __future__ import annotations

from raglens.fingerprint import fingerprint_model
from raglens.onnx_model import REFERENCE_TEXTS, model_reference_vectors
from raglens.reference_vectors import write_reference


def main() -> None:
    fingerprint = fingerprint_model(None)
    assert fingerprint is not None, "the bundled model is not installed"
    print(write_reference(fingerprint, REFERENCE_TEXTS, model_reference_vectors(fingerprint)))


if __name__ == "__main__":
    main()
