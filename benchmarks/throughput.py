"""Bulk embedding speed of raglens's exact engine against the machine's own fp32 ceiling, same run.

Usage: uv run python benchmarks/throughput.py [PATH] [--windows N]   (default: this repository, 400)

The ceiling: numpy's fp32 matmul rate measured now (GFLOP/s, on the shapes a MiniLM layer multiplies)
divided into the FLOPs these windows need (each window's real token count, no padding: per token and
layer 24·h² for the projections and the feed-forward, 4·L·h for attention). Every engine runs in its
own process (torch and onnxruntime slow each other in one), on the same windows, with the matmul rate
measured again just before and after it (the machine's speed drifts within minutes); each line gives
windows/s, the share of the ceiling, and agreement with SentenceTransformer.encode fp32 (least cosine,
top-10 identical over fixed queries). raglens's default bulk engine is the fused ONNX export; the last
line is raglens's whole index builder as `raglens search` runs it (engine, reading extents, SQLite cache).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
TEXTS_FILE = "windows.json"
QUERIES = [
    "how are windows cut?",
    "where is the cache file opened?",
    "what happens when the model cannot be loaded?",
    "how is a query ranked?",
    "drain_pending_jobs",
    "which files are skipped and why?",
    "how are control characters shown?",
    "what does the status line say?",
    "how does the embedding process talk to the app?",
    "where is the fingerprint computed?",
]

WORKLOAD = """
import json, sys
from raglens.corpus import CorpusOptions, load_corpus
from raglens.windows import cut_corpus, window_texts
from raglens.tokens import TokenCounter
from raglens.fingerprint import fingerprint_model
from raglens.windows import WindowParams

corpus_path, count, texts_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
corpus = load_corpus(corpus_path, CorpusOptions())
texts = window_texts(corpus, cut_corpus(corpus, WindowParams()))[:count]
with open(texts_file, "w", encoding="utf-8") as out:
    json.dump(texts, out)
fingerprint = fingerprint_model(None)
limit = fingerprint.max_seq_length
counter = TokenCounter(fingerprint.folder, fingerprint.name, limit)
tokens = [min(extent.token_count, limit - 2) + 2 for extent in counter.reading_extents(texts)]
hidden, layers = 384, 6
flops = sum(layers * length * (24 * hidden * hidden + 4 * length * hidden) for length in tokens)
print(json.dumps({"flops": flops, "windows": len(texts), "mean_tokens": sum(tokens) / len(tokens)}))
"""
"""The windows' texts, saved for every engine (a file edited meanwhile changes no engine's input), and
the FLOPs they need, from their real token counts."""

MATMUL = """
import json, time
import numpy as np
rng = np.random.default_rng(0)
best = 0.0
for rows, inner, outer in ((4096, 384, 1536), (4096, 1536, 384), (4096, 384, 384)):
    a = rng.standard_normal((rows, inner), dtype=np.float32)
    b = rng.standard_normal((inner, outer), dtype=np.float32)
    a @ b
    for _ in range(5):
        started = time.perf_counter()
        a @ b
        best = max(best, 2 * rows * inner * outer / (time.perf_counter() - started))
print(json.dumps({"gflops": best / 1e9}))
"""
"""numpy's best fp32 matmul rate now, on the shapes a MiniLM layer multiplies."""

ENGINE = """
import json, sys, tempfile, time
from pathlib import Path
import numpy as np

engine, texts_file, export, chunk, batch = sys.argv[1:6]
with open(texts_file, encoding="utf-8") as saved:
    texts = json.load(saved)
queries = json.loads(sys.argv[6])
size = int(chunk)
if engine == "st":
    from sentence_transformers import SentenceTransformer
    from raglens.embedding import default_model_path
    model = SentenceTransformer(str(default_model_path()), device="cpu")
    encode = lambda part: model.encode(part, batch_size=len(part), normalize_embeddings=True)
    encode_query = lambda query: encode([query])[0]
else:
    from raglens.fingerprint import fingerprint_model
    from raglens.onnx_model import OnnxEmbedder
    model = OnnxEmbedder(Path(export), fingerprint_model(None), bulk_batch_size=int(batch))
    encode, encode_query = model.encode, model.encode_query
encode(texts[:size])
if engine == "builder":
    from raglens.fingerprint import fingerprint_model
    from raglens.indexing import IndexBuilder
    from raglens.vector_cache import ModelCache, VectorCache
    cache = VectorCache.open(Path(tempfile.mkdtemp()))
    builder = IndexBuilder(texts, range(len(texts)), lambda _: model,
                           cache=ModelCache.of(cache, fingerprint_model(None)), batch_size=size)
    vectors = np.zeros((len(texts), model.dimension), dtype=np.float32)
    started = time.perf_counter()
    while (embedded := builder.next_batch()) is not None:
        vectors[list(embedded.rows)] = embedded.vectors
    seconds = time.perf_counter() - started
    cache.close()
else:
    started = time.perf_counter()
    vectors = np.concatenate([encode(texts[j : j + size]) for j in range(0, len(texts), size)])
    seconds = time.perf_counter() - started
query_vectors = np.stack([encode_query(q) for q in queries])
np.save(sys.argv[7], vectors)
np.save(sys.argv[8], query_vectors)
print(json.dumps({"windows_per_second": len(texts) / seconds}))
"""
"""One engine embedding the windows, fed ``chunk`` at a time; ``batch``: the engine's own runs."""


def python(script: str, *arguments: str) -> dict[str, float]:
    """The JSON line a script prints, run in a fresh process from the repository."""
    command = [sys.executable, "-c", script, *arguments]
    run = subprocess.run(command, check=True, capture_output=True, text=True, cwd=REPO_ROOT)
    result: dict[str, float] = json.loads(run.stdout.strip().splitlines()[-1])
    return result


def run_engine(engine: str, export: str, chunk: int, batch: int, folder: Path):  # type: ignore[no-untyped-def]
    """Windows per second, the window and query vectors, and the matmul rate around the run."""
    import numpy as np

    stem = f"{engine}-{chunk}-{batch}"
    windows_file, queries_file = folder / f"{stem}-w.npy", folder / f"{stem}-q.npy"
    before = python(MATMUL)["gflops"]
    arguments = [engine, str(folder / TEXTS_FILE), export, str(chunk), str(batch), json.dumps(QUERIES)]
    rate = python(ENGINE, *arguments, str(windows_file), str(queries_file))["windows_per_second"]
    after = python(MATMUL)["gflops"]
    return rate, (before + after) / 2, np.load(windows_file), np.load(queries_file)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", nargs="?", default=str(REPO_ROOT))
    parser.add_argument("--windows", type=int, default=400)
    args = parser.parse_args()
    import numpy as np

    from raglens.embedding import DEFAULT_BATCH_SIZE
    from raglens.onnx_model import BULK_BATCH_SIZE

    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        export = folder / "model.onnx"
        make_export = (
            "from pathlib import Path\n"
            "from raglens.fingerprint import fingerprint_model\n"
            "from raglens.onnx_model import export_model\n"
            f"export_model(fingerprint_model(None), Path({str(export)!r}))\n"
        )
        subprocess.run([sys.executable, "-c", make_export], check=True, capture_output=True, cwd=REPO_ROOT)
        import onnx

        fused = {node.op_type for node in onnx.load(str(export)).graph.node} & {"Attention", "BiasGelu"}
        workload = python(WORKLOAD, args.path, str(args.windows), str(folder / TEXTS_FILE))
        flops_per_window = workload["flops"] / workload["windows"]
        print(
            f"{workload['windows']:.0f} windows, {workload['mean_tokens']:.0f} tokens each on average, "
            f"{flops_per_window / 1e9:.2f} GFLOP a window; the ceiling of each line is numpy's fp32 "
            "matmul rate measured just before and after it, divided by that"
        )

        def share(rate: float, gflops: float) -> str:
            ceiling = gflops * 1e9 / flops_per_window
            return (
                f"{rate:.1f} windows/s = {rate / ceiling:.0%} of the ceiling "
                f"({gflops:.0f} GFLOP/s, {ceiling:.1f} windows/s)"
            )

        reference_rate, gflops, reference, reference_queries = run_engine("st", "", 16, 16, folder)
        print(f"SentenceTransformer.encode fp32, batch 16: {share(reference_rate, gflops)}")
        reference_top = np.argsort(-(reference_queries @ reference.T), axis=1, kind="stable")[:, :10]
        label = "ONNX export, fused" if fused else "ONNX export (not fused)"
        lines = [("onnx", 16, batch, f"{label}, runs of {batch}") for batch in (1, 2, 4, 8, 16)]
        # Next to the engine at its default runs: the machine's speed drifts within minutes.
        builder = f"raglens's index builder (default: {label}, runs of {BULK_BATCH_SIZE}, extents, cache)"
        at = next(i for i, line in enumerate(lines) if line[2] == BULK_BATCH_SIZE) + 1
        lines.insert(at, ("builder", DEFAULT_BATCH_SIZE, BULK_BATCH_SIZE, builder))
        for engine, chunk, batch, name in lines:
            rate, gflops, vectors, queries = run_engine(engine, str(export), chunk, batch, folder)
            top = np.argsort(-(queries @ vectors.T), axis=1, kind="stable")[:, :10]
            agreement = float(np.mean([(a == b).all() for a, b in zip(top, reference_top, strict=True)]))
            least = float(np.min(np.sum(vectors * reference, axis=1)))
            print(
                f"{name}: {share(rate, gflops)}, {rate / reference_rate:.2f}x sentence-transformers; "
                f"top-10 identical for {agreement:.0%} of {len(QUERIES)} queries; least cosine {least:.7f}"
            )


if __name__ == "__main__":
    main()
