"""On a machine with a GPU: the CUDA path's top-k against the CPU fp32 reference, and its windows/s.

Usage: uv run python benchmarks/gpu_check.py [PATH] [--model M] [--device D]   (gpu.sh runs it)
Both devices embed the same windows of PATH (default: sample_corpus) with sentence-transformers, the
path `--device cuda` takes (several devices, as cuda:0,cuda:1, take its multi-process pool, whose
start is left out of the time as the single device's first batch is). Each test question's top-10
must be the same windows in the same order, scores within 1e-3 (float32 kernels differ between
devices). Throughput: windows per second of the whole corpus on each device, the CPU one measured
in the same run as the floor.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from raglens.corpus import CorpusOptions, load_corpus
from raglens.embedding import SentenceTransformerEmbedder
from raglens.windows import WindowParams, cut_corpus, window_texts

QUESTIONS = (
    "what happens after a job is acknowledged?",
    "how are failed jobs retried with backoff?",
    "drain_pending_jobs",
    "Wie starte ich einen Worker?",
    "what is a good recipe for banana bread?",
)
TOP_K = 10
SCORE_TOLERANCE = 1e-3


def embed(device: str, model: str | None, texts: list[str]) -> tuple[np.ndarray, np.ndarray, float]:
    """Window vectors, question vectors and windows/s on ``device`` (after one warm-up batch)."""
    embedder = SentenceTransformerEmbedder(model, device)
    embedder.encode(texts[:8])
    started = time.perf_counter()
    vectors = embedder.encode(texts)
    rate = len(texts) / (time.perf_counter() - started)
    questions = np.stack([embedder.encode_query(question) for question in QUESTIONS])
    return vectors, questions, rate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default="sample_corpus")
    parser.add_argument("--model", default=None)
    parser.add_argument(
        "--device", default="cuda", help="the device checked against the CPU (cpu tries the script itself)"
    )
    args = parser.parse_args()
    import torch

    if "cuda" in args.device and not torch.cuda.is_available():
        print("no CUDA device here: the GPU check is skipped")
        return 0
    corpus = load_corpus(args.path, CorpusOptions())
    texts = window_texts(corpus, cut_corpus(corpus, WindowParams()))
    cpu_vectors, cpu_questions, cpu_rate = embed("cpu", args.model, texts)
    gpu_vectors, gpu_questions, gpu_rate = embed(args.device, args.model, texts)
    name = torch.cuda.get_device_name(0) if "cuda" in args.device else args.device
    print(f"{len(texts)} windows of {args.path}; {name}")
    ratio = gpu_rate / cpu_rate
    print(f"windows/s: cpu {cpu_rate:.1f}, {args.device} {gpu_rate:.1f} ({ratio:.1f}x the CPU floor)")
    same = True
    for question, on_cpu, on_gpu in zip(QUESTIONS, cpu_questions, gpu_questions, strict=True):
        cpu_scores, gpu_scores = cpu_vectors @ on_cpu, gpu_vectors @ on_gpu
        cpu_top = np.argsort(-cpu_scores, kind="stable")[:TOP_K]
        gpu_top = np.argsort(-gpu_scores, kind="stable")[:TOP_K]
        gap = float(np.max(np.abs(cpu_scores[cpu_top] - gpu_scores[cpu_top])))
        agrees = list(cpu_top) == list(gpu_top) and gap <= SCORE_TOLERANCE
        same &= agrees
        print(
            f"{'same' if agrees else 'DIFFERENT'} top-{TOP_K} for {question!r} (largest score gap {gap:.2e})"
        )
    print(f"{args.device} ranks as the CPU fp32 reference" if same else f"{args.device} ranks differently")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
