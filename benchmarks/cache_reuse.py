"""Measure what the vector cache saves: cold and warm indexing, re-windowing, a warm headless search.

Usage: uv run python benchmarks/cache_reuse.py PATH [--fake]
  --fake  use the hashing stand-in instead of the model: measures the cache itself on a big corpus
Each run starts from an empty cache in a temporary folder. Numbers vary on shared machines.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from raglens.corpus import CorpusOptions, load_corpus
from raglens.embedding import Embedder
from raglens.engine import Engines
from raglens.fingerprint import ModelFingerprint, fingerprint_model
from raglens.pipeline import build_index
from raglens.pipeline_steps import WindowsEmbedded
from raglens.vector_cache import ModelCache, VectorCache
from raglens.windows import Unit, WindowParams, cut_corpus, window_texts

QUERY = "how does the cache decide which windows to embed again?"


def timed_build(corpus, params, embedder, cache):  # type: ignore[no-untyped-def]
    """Seconds to build the index, and how many windows were embedded rather than cached."""
    embedded = 0

    def count(step: object) -> None:
        nonlocal embedded
        if isinstance(step, WindowsEmbedded):
            embedded = step.done

    started = time.perf_counter()
    index = build_index(corpus, params, Engines.serving(embedder), cache=cache, on_step=count).snapshot()
    return time.perf_counter() - started, embedded, index.window_count


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path")
    parser.add_argument("--fake", action="store_true")
    args = parser.parse_args()
    corpus = load_corpus(args.path, CorpusOptions())
    size_mb = sum(source.size_bytes for source in corpus.files) / 1e6
    print(f"corpus: {len(corpus.files)} files, {size_mb:.1f} MB")
    embedder: Embedder
    factory = None
    if args.fake:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from tests.fakes import HashingEmbedder

        embedder, factory = HashingEmbedder(dimension=384), "tests.fakes:HashingEmbedder"
    else:
        from raglens.embedding import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder(device="cpu")
    with tempfile.TemporaryDirectory() as folder:
        cache_dir = Path(folder)
        with VectorCache.open(cache_dir) as cache:
            started = time.perf_counter()
            fingerprint = fingerprint_model(None, factory=factory, hash_large_file=cache.file_sha256)
            first_fingerprint = time.perf_counter() - started
            started = time.perf_counter()
            again = fingerprint_model(None, factory=factory, hash_large_file=cache.file_sha256)
            print(
                f"fingerprint: {first_fingerprint * 1000:.0f} ms the first time (weights hashed), "
                f"{(time.perf_counter() - started) * 1000:.0f} ms after"
            )
            assert isinstance(fingerprint, ModelFingerprint) and again == fingerprint
            model_cache = ModelCache(cache, fingerprint, embedder.dimension)
            params = WindowParams()
            seconds, embedded, total = timed_build(corpus, params, embedder, model_cache)
            print(
                f"cold index {params.describe()}: {embedded} of {total} windows embedded in {seconds:.1f} s"
            )
            seconds, embedded, total = timed_build(corpus, params, embedder, model_cache)
            print(
                f"warm index {params.describe()}: {embedded} of {total} windows embedded in {seconds:.2f} s"
            )
            other = WindowParams(Unit.CHARS, 1000, 100)
            seconds, embedded, total = timed_build(corpus, other, embedder, model_cache)
            rewindowed = f"re-windowed to {other.describe()}"
            print(f"{rewindowed}: {embedded} of {total} windows embedded in {seconds:.1f} s")
            entries = cache.info().entries
        size = sum(path.stat().st_size for path in cache_dir.iterdir())
        texts = window_texts(corpus, cut_corpus(corpus, params))
        started = time.perf_counter()
        with VectorCache.open(cache_dir) as cache:  # as the embedding process reads it for the app
            identity = fingerprint_model(None, factory=factory, hash_large_file=cache.file_sha256)
            assert identity is not None
            found = sum(entry is not None for entry in ModelCache.of(cache, identity).lookup(texts))
        elapsed_ms = (time.perf_counter() - started) * 1000
        print(f"the app's cache read: {found} of {len(texts)} windows in {elapsed_ms:.0f} ms")
        print(f"cache file: {size / 1e6:.1f} MB for {entries} vectors ({size / entries:.0f} bytes each)")
        if not args.fake:
            command = [sys.executable, "-m", "raglens", "search", args.path, QUERY, "-q", "--json"]
            started = time.perf_counter()
            subprocess.run([*command, "--cache-dir", folder], check=True, capture_output=True)
            print(
                f"warm `raglens search` from process start to hits: {time.perf_counter() - started:.1f} s "
                "(0 windows embedded; most of it is importing sentence-transformers for the query)"
            )


if __name__ == "__main__":
    main()
