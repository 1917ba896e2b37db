"""What proving the ONNX export costs each open, against the bare open it guards (issue 28's ≤ 15 ms).

Usage: uv run python benchmarks/export_check.py [--cache-dir DIR] [--rounds 20]
Uses the bundled model's export in DIR (default: a fresh temporary folder, exported first, which
imports torch once). Each round opens the export bare (``OnnxEmbedder``) and then proven
(``load_exported``: witness read, the file's sha256 taken in a thread while onnxruntime loads it, the
witness texts embedded and compared), alternating, so both meet the same machine. Also times the sha256
alone, as it would cost unoverlapped. Prints medians and the check's cost as their difference.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from raglens.fingerprint import fingerprint_model, sha256_of_file
from raglens.onnx_model import OnnxEmbedder, export_model, export_path, load_exported


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    fingerprint = fingerprint_model(None)
    assert fingerprint is not None, "the bundled model is installed with raglens"
    cache_dir = args.cache_dir or Path(tempfile.mkdtemp(prefix="raglens-export-check-"))
    path = export_path(cache_dir, fingerprint)
    if not path.exists():
        print(f"exporting to {path} (imports torch)")
        export_model(fingerprint, path)
    OnnxEmbedder(path, fingerprint)  # the first open reads the file from disk: neither side pays it
    bare, proven = [], []
    for _ in range(args.rounds):
        started = time.perf_counter()
        OnnxEmbedder(path, fingerprint)
        bare.append(time.perf_counter() - started)
        started = time.perf_counter()
        embedder = load_exported(cache_dir, fingerprint, on_warning=print)
        proven.append(time.perf_counter() - started)
        assert embedder is not None, "the export passed its check"
    started = time.perf_counter()
    sha256_of_file(path)
    hashing = time.perf_counter() - started
    bare_ms, proven_ms = statistics.median(bare) * 1e3, statistics.median(proven) * 1e3
    print(f"cpu count {os.cpu_count()}, {args.rounds} rounds, export {path.stat().st_size / 1e6:.1f} MB")
    print(f"bare open   p50 {bare_ms:7.1f} ms (the floor)")
    print(f"proven open p50 {proven_ms:7.1f} ms")
    print(f"the check   p50 {proven_ms - bare_ms:7.1f} ms ({proven_ms / bare_ms:.2f}x the floor)")
    print(f"sha256 of the file alone (overlapped with the load in a proven open): {hashing * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
