"""Measure each step of the headless pipeline on a corpus: import, load, cut, embed, rank.

Usage: uv run python benchmarks/pipeline_timing.py [PATH] [--repeat-queries N]
Numbers vary on shared machines; compare runs made on one machine, one after another.
"""

from __future__ import annotations

import argparse
import statistics
import time

from raglens.corpus import CorpusOptions
from raglens.engine import Engines
from raglens.pipeline import build_index, read_corpus, search_index
from raglens.windows import WindowParams, cut_corpus

QUERIES = (
    "what happens after a job is acknowledged?",
    "drain_pending_jobs",
    "Wie starte ich einen Worker?",
    "have you ever been to a five-star resort?",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path", nargs="?", default="sample_corpus")
    parser.add_argument("--repeat-queries", type=int, default=20)
    args = parser.parse_args()

    started = time.perf_counter()
    corpus = read_corpus(args.path, CorpusOptions())
    windows = cut_corpus(corpus, WindowParams())
    read_and_cut_s = time.perf_counter() - started

    started = time.perf_counter()
    import sentence_transformers  # noqa: F401

    import_s = time.perf_counter() - started
    from raglens.embedding import SentenceTransformerEmbedder

    started = time.perf_counter()
    embedder = SentenceTransformerEmbedder(device="cpu")
    load_s = time.perf_counter() - started

    started = time.perf_counter()
    index = build_index(corpus, WindowParams(), Engines.serving(embedder)).snapshot()
    embed_s = time.perf_counter() - started

    latencies = []
    for _ in range(args.repeat_queries):
        for query in QUERIES:
            started = time.perf_counter()
            search_index(index, embedder, query, 5)
            latencies.append((time.perf_counter() - started) * 1000)

    print(f"corpus: {args.path}: {len(corpus.files)} files, {len(windows)} windows of 1000/200 chars")
    print(f"read + cut            {read_and_cut_s * 1000:8.1f} ms")
    print(f"import sent.-transf.  {import_s:8.2f} s")
    print(f"load model            {load_s:8.2f} s")
    print(f"embed all windows     {embed_s:8.2f} s  ({len(windows) / embed_s:.1f} windows/s)")
    print(
        f"query (embed + rank)  median {statistics.median(latencies):.1f} ms, "
        f"p90 {statistics.quantiles(latencies, n=10)[-1]:.1f} ms over {len(latencies)}"
    )


if __name__ == "__main__":
    main()
