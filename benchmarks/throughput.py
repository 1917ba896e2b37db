"""Bulk embedding speed of raglens's exact engine against the machine's own fp32 ceiling, same run.

Usage: uv run python benchmarks/throughput.py [PATH] [--windows N]   (default: this repository, 400)

The ceiling: numpy's fp32 matmul rate measured now (GFLOP/s, on the shapes a MiniLM layer multiplies)
divided into the FLOPs these windows need (each window's real token count, no padding: per token and
layer 24·h² for the projections and the feed-forward, 4·L·h for attention). Every engine runs in its
own process (torch and onnxruntime slow each other in one), on the same windows; each line gives
windows/s, the share of the ceiling, and agreement with SentenceTransformer.encode fp32 (least cosine,
top-10 identical over fixed queries). raglens's default bulk engine is the fused ONNX export.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
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

CEILING = """
import json, sys, time
import numpy as np
from raglens.corpus import CorpusOptions, load_corpus
from raglens.windows import cut_corpus, window_texts
from raglens.tokens import TokenCounter
from raglens.fingerprint import fingerprint_model
from raglens.windows import WindowParams

corpus_path, count = sys.argv[1], int(sys.argv[2])
corpus = load_corpus(corpus_path, CorpusOptions())
texts = window_texts(corpus, cut_corpus(corpus, WindowParams()))[:count]
fingerprint = fingerprint_model(None)
limit = fingerprint.max_seq_length
counter = TokenCounter(fingerprint.folder, fingerprint.name, limit)
tokens = [min(extent.token_count, limit - 2) + 2 for extent in counter.reading_extents(texts)]
hidden, layers = 384, 6
flops = sum(layers * length * (24 * hidden * hidden + 4 * length * hidden) for length in tokens)
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
print(json.dumps({"gflops": best / 1e9, "flops": flops, "windows": len(texts),
                  "mean_tokens": sum(tokens) / len(tokens)}))
"""

ENGINE = """
import json, sys, time
from pathlib import Path
import numpy as np
from raglens.corpus import CorpusOptions, load_corpus
from raglens.windows import cut_corpus, window_texts
from raglens.windows import WindowParams

engine, corpus_path, count, export, batch, threads, spinning = sys.argv[1:8]
corpus = load_corpus(corpus_path, CorpusOptions())
texts = window_texts(corpus, cut_corpus(corpus, WindowParams()))[: int(count)]
queries = json.loads(sys.argv[8])
if engine == "st":
    from sentence_transformers import SentenceTransformer
    from raglens.embedding import default_model_path
    import torch
    torch.set_num_threads(int(threads))
    model = SentenceTransformer(str(default_model_path()), device="cpu")
    encode = lambda chunk: model.encode(chunk, batch_size=len(chunk), normalize_embeddings=True)
else:
    from raglens.fingerprint import fingerprint_model
    from raglens.onnx_model import OnnxEmbedder
    model = OnnxEmbedder(Path(export), fingerprint_model(None), bulk_threads=int(threads),
                         bulk_spinning=spinning == "1")
    encode = model.encode
size = int(batch)
encode(texts[:size])
started = time.perf_counter()
batches = [encode(texts[j : j + size]) for j in range(0, len(texts), size)]
seconds = time.perf_counter() - started
query_vectors = np.stack([encode([q])[0] for q in queries])
np.save(sys.argv[9], np.concatenate(batches))
np.save(sys.argv[10], query_vectors)
print(json.dumps({"windows_per_second": len(texts) / seconds}))
"""


def run_engine(
    engine: str, path: str, count: int, export: str, batch: int, threads: int, spinning: bool, folder: Path
):  # type: ignore[no-untyped-def]
    """Windows per second, and the window and query vectors, of one engine in its own process."""
    stem = f"{engine}-{batch}-{threads}-{int(spinning)}"
    windows_file, queries_file = folder / f"{stem}-w.npy", folder / f"{stem}-q.npy"
    command = [sys.executable, "-c", ENGINE, engine, path, str(count), export, str(batch), str(threads)]
    command += [str(int(spinning)), json.dumps(QUERIES), str(windows_file), str(queries_file)]
    run = subprocess.run(command, check=True, capture_output=True, text=True, cwd=REPO_ROOT)
    import numpy as np

    rate = json.loads(run.stdout.strip().splitlines()[-1])["windows_per_second"]
    return rate, np.load(windows_file), np.load(queries_file)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", nargs="?", default=str(REPO_ROOT))
    parser.add_argument("--windows", type=int, default=400)
    args = parser.parse_args()
    import numpy as np

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
        ceiling_run = subprocess.run(
            [sys.executable, "-c", CEILING, args.path, str(args.windows)],
            check=True,
            capture_output=True,
            text=True,
            cwd=REPO_ROOT,
        )
        ceiling = json.loads(ceiling_run.stdout.strip().splitlines()[-1])
        ceiling_rate = ceiling["gflops"] * 1e9 / ceiling["flops"] * ceiling["windows"]
        print(
            f"{ceiling['windows']} windows, {ceiling['mean_tokens']:.0f} tokens each on average; "
            f"numpy fp32 matmul {ceiling['gflops']:.0f} GFLOP/s now; "
            f"{ceiling['flops'] / ceiling['windows'] / 1e9:.2f} GFLOP a window -> ceiling "
            f"{ceiling_rate:.1f} windows/s"
        )
        reference_rate, reference, reference_queries = run_engine(
            "st", args.path, args.windows, "", 16, 2, False, folder
        )
        print(
            f"SentenceTransformer.encode fp32, batch 16, 2 threads: {reference_rate:.1f} windows/s "
            f"= {reference_rate / ceiling_rate:.0%} of the ceiling"
        )
        reference_top = np.argsort(-(reference_queries @ reference.T), axis=1, kind="stable")[:, :10]
        label = "ONNX export, fused" if fused else "ONNX export (not fused)"
        for batch, threads, spinning in (
            (8, 2, False),
            (16, 2, False),
            (32, 2, False),
            (8, 2, True),
            (16, 2, True),
        ):
            rate, vectors, queries = run_engine(
                "onnx", args.path, args.windows, str(export), batch, threads, spinning, folder
            )
            top = np.argsort(-(queries @ vectors.T), axis=1, kind="stable")[:, :10]
            agreement = float(np.mean([(a == b).all() for a, b in zip(top, reference_top, strict=True)]))
            least = float(np.min(np.sum(vectors * reference, axis=1)))
            print(
                f"{label}, batch {batch}, {threads} threads, spinning {'on' if spinning else 'off'}: "
                f"{rate:.1f} windows/s = {rate / ceiling_rate:.0%} of the ceiling, "
                f"{rate / reference_rate:.2f}x sentence-transformers; top-10 identical for "
                f"{agreement:.0%} of {len(QUERIES)} queries; least cosine {least:.7f}"
            )


if __name__ == "__main__":
    main()
