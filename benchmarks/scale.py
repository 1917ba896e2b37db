"""Query latency at 10k, 100k and 1M windows, and peak memory of an index of 100k windows.

Usage: uv run python benchmarks/scale.py
The ranking runs on synthetic unit vectors; the query is embedded for real through the bundled
model's ONNX export (made once into a temporary folder, which takes a few seconds of torch).
Memory is measured in a fresh process: synthetic files cut into 100k real windows, their vectors,
and one ranking, against the bytes of the vectors plus the corpus text.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: 2 cores, one BLAS thread (PERF-NOTES)

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from raglens.embedding import normalize_rows
from raglens.index import IndexSnapshot, VectorIndex
from raglens.search import rank
from raglens.windows import Unit, Window

DIMENSION = 384
QUERIES = [f"how does part {i} of the system handle retries?" for i in range(40)]


def embedded_queries() -> tuple[list[np.ndarray], list[float]]:
    """The query vectors from the ONNX export, and how long each embedding took (ms)."""
    from raglens.fingerprint import fingerprint_model
    from raglens.onnx_model import OnnxEmbedder, export_path

    fingerprint = fingerprint_model(None)
    assert fingerprint is not None
    with tempfile.TemporaryDirectory() as folder:
        target = export_path(Path(folder), fingerprint)
        export = (
            "from pathlib import Path\n"
            "from raglens.fingerprint import fingerprint_model\n"
            "from raglens.onnx_model import export_model\n"
            f"export_model(fingerprint_model(None), Path({str(target)!r}))\n"
        )
        # In another process: torch and onnxruntime slow each other down in one (PERF-NOTES).
        subprocess.run([sys.executable, "-c", export], check=True, capture_output=True)
        embedder = OnnxEmbedder(target, fingerprint)
        embedder.encode_query("warm up")
        vectors, timings = [], []
        for query in QUERIES:
            started = time.perf_counter()
            vectors.append(embedder.encode_query(query))
            timings.append((time.perf_counter() - started) * 1000)
    return vectors, timings


def synthetic_index(count: int) -> IndexSnapshot:
    windows = [Window("synthetic.txt", Unit.CHARS, i, i * 800, i * 800 + 1000, 1, 1) for i in range(count)]
    index = VectorIndex(windows, DIMENSION)
    rng = np.random.default_rng(0)
    for start in range(0, count, 100_000):
        stop = min(start + 100_000, count)
        block = normalize_rows(rng.standard_normal((stop - start, DIMENSION), dtype=np.float32))
        index.fill(range(start, stop), block)
    return index.snapshot()


def timed_queries(index: IndexSnapshot, vectors: list[np.ndarray], embed_ms: list[float]) -> str:
    """p50 and p90 of each query's embedding time plus its ranking over ``index``, in words."""
    total_ms = []
    for vector, embed in zip(vectors, embed_ms, strict=True):
        started = time.perf_counter()
        rank(index, vector, 10)
        total_ms.append(embed + (time.perf_counter() - started) * 1000)
    total_ms.sort()
    return (
        f"embed + rank + top-10 p50 {statistics.median(total_ms):.1f} ms, "
        f"p90 {total_ms[int(len(total_ms) * 0.9)]:.1f} ms"
    )


def latency(vectors: list[np.ndarray], embed_ms: list[float]) -> None:
    print(f"query embedding (ONNX, 1 thread): median {statistics.median(embed_ms):.1f} ms")
    for count in (10_000, 100_000, 1_000_000):
        index = synthetic_index(count)
        print(f"{count:>9,} windows: {timed_queries(index, vectors, embed_ms)}")
        del index


def memory_mapped_latency(vectors: list[np.ndarray], embed_ms: list[float], count: int = 1_000_000) -> None:
    """Ranking ``count`` windows whose vectors are read from a memory-mapped .npy file, not loaded.

    The file is written first, so the system's page cache holds it as it would a file read
    before; its pages count in the process's resident memory only as the product touches them.
    """
    windows = tuple(
        Window("synthetic.txt", Unit.CHARS, i, i * 800, i * 800 + 1000, 1, 1) for i in range(count)
    )
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "vectors.npy"
        stored = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(count, DIMENSION))
        for start in range(0, count, 100_000):
            stop = min(start + 100_000, count)
            stored[start:stop] = normalize_rows(
                rng.standard_normal((stop - start, DIMENSION), dtype=np.float32)
            )
        stored.flush()
        del stored
        mapped = np.load(path, mmap_mode="r")
        snapshot = IndexSnapshot(windows, DIMENSION, np.arange(count), mapped)
        size = path.stat().st_size / 2**30
        print(
            f"{count:>9,} windows, vectors memory-mapped from a {size:.2f} GiB file: "
            f"{timed_queries(snapshot, vectors, embed_ms)} (goal p50 <= 150 ms)"
        )


MEMORY_CHILD = """
import sys
import numpy as np
from raglens.embedding import normalize_rows
from raglens.index import VectorIndex
from raglens.search import rank
from raglens.windows import WindowParams, cut_windows

count = int(sys.argv[1])
line = "def handler(request):  # a synthetic line of code to fill the corpus with text\\n"
texts = [line * 160 for _ in range(count // 16)]  # ~12.6 kB a file: 16 windows of 1000/200
windows = [w for n, text in enumerate(texts) for w in cut_windows(f"f{n}.py", text, WindowParams())]
index = VectorIndex(windows, 384)
rng = np.random.default_rng(0)
for start in range(0, len(windows), 10_000):
    stop = min(start + 10_000, len(windows))
    block = rng.standard_normal((stop - start, 384), dtype=np.float32)
    index.fill(range(start, stop), normalize_rows(block))
snapshot = index.snapshot()
rank(snapshot, snapshot.vectors[0], 10)
text_bytes = sum(len(t) for t in texts)  # ASCII: one byte a character
peak = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(len(windows), len(windows) * 384 * 4, text_bytes, peak)
"""


def memory(count: int = 100_000) -> None:
    # VmHWM, as the child reads it: ru_maxrss carries over an exec from this process (gigabytes
    # once the 1M-window runs have been here).
    measure_baseline = (
        "import numpy, raglens.search, raglens.windows\n"
        "print(next(int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmHWM')))\n"
    )
    baseline = subprocess.run(
        [sys.executable, "-c", measure_baseline], check=True, capture_output=True, text=True
    )
    base = int(baseline.stdout)
    child = [sys.executable, "-c", MEMORY_CHILD, str(count)]
    run = subprocess.run(child, check=True, capture_output=True, text=True)
    windows, vector_bytes, text_bytes, peak = (int(v) for v in run.stdout.split())
    data = vector_bytes + text_bytes
    print(
        f"{windows:,} windows: peak {peak / 2**20:.0f} MiB ({(peak - base) / 2**20:.0f} MiB above "
        f"the {base / 2**20:.0f} MiB of Python and numpy); vectors + text {data / 2**20:.0f} MiB; "
        f"ratio {(peak - base) / data:.2f} (goal <= 1.3)"
    )


if __name__ == "__main__":
    query_vectors, query_ms = embedded_queries()
    latency(query_vectors, query_ms)
    memory_mapped_latency(query_vectors, query_ms)
    memory()
