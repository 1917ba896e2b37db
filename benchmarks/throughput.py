"""Windows per second of raglens's engines against plain SentenceTransformer.encode fp32, same windows.

Usage: uv run python benchmarks/throughput.py [PATH] [--windows N]   (default: this repository, 400)
Also the top-10 agreement with the fp32 reference over a fixed set of queries. The ONNX export is
made in a separate process first (torch and onnxruntime slow each other down in one process);
each engine then runs in its own process too, so none is measured next to another.
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

ENGINE = """
import json, sys, time
from pathlib import Path
import numpy as np
from raglens.corpus import CorpusOptions, load_corpus
from raglens.pipeline import cut_corpus, window_texts
from raglens.windows import WindowParams

engine, corpus_path, count, export, batch, threads = sys.argv[1:7]
length_sorted = engine.endswith("-sorted")
corpus = load_corpus(corpus_path, CorpusOptions())
texts = window_texts(corpus, cut_corpus(corpus, WindowParams()))[: int(count)]
queries = json.loads(sys.argv[7])
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
    model = OnnxEmbedder(Path(export), fingerprint_model(None), bulk_threads=int(threads))
    encode = model.encode
size = int(batch)
encode(texts[:size])
started = time.perf_counter()
order = sorted(range(len(texts)), key=lambda i: len(texts[i])) if length_sorted else list(range(len(texts)))
batches = [encode([texts[i] for i in order[j : j + size]]) for j in range(0, len(order), size)]
seconds = time.perf_counter() - started
vectors = np.empty((len(texts), batches[0].shape[1]), dtype=np.float32)
vectors[order] = np.concatenate(batches)
query_vectors = np.stack([encode([q])[0] for q in queries])
np.save(sys.argv[8], vectors)
np.save(sys.argv[9], query_vectors)
print(json.dumps({"windows_per_second": len(texts) / seconds}))
"""


def run_engine(engine: str, path: str, count: int, export: str, batch: int, threads: int, folder: Path):
    """Windows per second, and the window and query vectors, of one engine in its own process."""
    stem = f"{engine}-{Path(export).stem}-{batch}-{threads}"
    windows_file, queries_file = folder / f"{stem}-w.npy", folder / f"{stem}-q.npy"
    command = [sys.executable, "-c", ENGINE, engine, path, str(count), export, str(batch), str(threads)]
    command += [json.dumps(QUERIES), str(windows_file), str(queries_file)]
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
        quantized = folder / "model-int8.onnx"
        make_quantized = (
            "from onnxruntime.quantization import QuantType, quantize_dynamic\n"
            f"quantize_dynamic({str(export)!r}, {str(quantized)!r}, weight_type=QuantType.QInt8)\n"
        )
        subprocess.run([sys.executable, "-c", make_quantized], check=True, capture_output=True, cwd=REPO_ROOT)
        reference_rate, reference, reference_queries = run_engine(
            "st", args.path, args.windows, "", 16, 2, folder
        )
        print(f"SentenceTransformer.encode fp32, batch 16, 2 threads: {reference_rate:.1f} windows/s")
        reference_top = np.argsort(-(reference_queries @ reference.T), axis=1, kind="stable")[:, :10]
        engines = [("ONNX fp32", export, batch, threads) for batch, threads in ((8, 2), (16, 2), (32, 2))]
        engines += [("ONNX fp32 length-sorted", export, 16, 2), ("ONNX int8 (dynamic)", quantized, 16, 2)]
        for label, model_file, batch, threads in engines:
            engine = "onnx-sorted" if "sorted" in label else "onnx"
            rate, vectors, queries = run_engine(
                engine, args.path, args.windows, str(model_file), batch, threads, folder
            )
            top = np.argsort(-(queries @ vectors.T), axis=1, kind="stable")[:, :10]
            agreement = float(np.mean([(a == b).all() for a, b in zip(top, reference_top, strict=True)]))
            least = float(np.min(np.sum(vectors * reference, axis=1)))
            print(
                f"{label}, batch {batch}, {threads} thread(s): {rate:.1f} windows/s = "
                f"{rate / reference_rate:.2f}x; top-10 identical for {agreement:.0%} of {len(QUERIES)} "
                f"queries; least cosine {least:.6f}"
            )


if __name__ == "__main__":
    main()
