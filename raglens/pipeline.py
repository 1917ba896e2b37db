"""Rung-1 naive RAG end to end, narrating each step: corpus, windows, vectors, ranking."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from raglens.corpus import Corpus, CorpusOptions, load_corpus
from raglens.display import describe_age
from raglens.embedding import DEFAULT_BATCH_SIZE, Embedder, embed_in_batches
from raglens.fingerprint import DEFAULT_PRECISION, ModelFingerprint, fingerprint_model
from raglens.index import VectorIndex
from raglens.search import SearchResult, rank
from raglens.vector_cache import CachedVector, ModelCache, VectorCache
from raglens.windows import Window, WindowParams, cut_windows


@dataclass(frozen=True)
class FilesFound:
    """The corpus was listed and read."""

    file_count: int
    skipped_count: int

    def describe(self) -> str:
        return f"found {self.file_count} file(s) to index, skipped {self.skipped_count}"


@dataclass(frozen=True)
class WindowsCut:
    """Every file was cut into windows."""

    window_count: int
    params: WindowParams

    def describe(self) -> str:
        return f"cut into {self.window_count} window(s) of {self.params.describe()}"


@dataclass(frozen=True)
class VectorsFromCache:
    """Some windows already had vectors in the cache and will not be embedded again."""

    found: int
    total: int
    oldest: float | None = None
    """When the oldest of the found vectors was stored (seconds since the epoch)."""

    def describe(self) -> str:
        stored = ""
        if self.oldest is not None:
            stored = f" (oldest stored {describe_age(time.time() - self.oldest)} ago)"
        to_embed = self.total - self.found
        return f"{self.found} of {self.total} window(s) from the cache{stored}; {to_embed} to embed"


@dataclass(frozen=True)
class WindowsEmbedded:
    """Another batch of windows has its vectors."""

    done: int
    total: int
    model: str

    def describe(self) -> str:
        return f"embedded {self.done}/{self.total} window(s) via {self.model}"


@dataclass(frozen=True)
class IndexReady:
    """Every window is embedded; the index can be searched in full."""

    window_count: int
    dimension: int

    def describe(self) -> str:
        return f"index ready: {self.window_count} vector(s) of {self.dimension} dimensions"


PipelineStep = FilesFound | WindowsCut | VectorsFromCache | WindowsEmbedded | IndexReady
OnStep = Callable[[PipelineStep], None]


def _ignore_step(step: PipelineStep) -> None:
    """The default narrator, which says nothing."""


def read_corpus(
    path: str | os.PathLike[str], options: CorpusOptions, *, on_step: OnStep = _ignore_step
) -> Corpus:
    """Read the corpus at ``path`` (an error if nothing is indexable) and narrate what was found."""
    corpus = load_corpus(path, options)
    on_step(FilesFound(len(corpus.files), len(corpus.skipped)))
    return corpus


def cut_corpus(corpus: Corpus, params: WindowParams) -> list[Window]:
    """Every window of every file, in corpus order."""
    return [window for source in corpus.files for window in cut_windows(source.path, source.text, params)]


def window_texts(corpus: Corpus, windows: Sequence[Window]) -> list[str]:
    """The text of each window, sliced from its file."""
    return [window.text_in(corpus.file(window.path).text) for window in windows]


@dataclass(frozen=True)
class CacheLookup:
    """What the cache had for a corpus's windows under one model configuration."""

    entries: list[CachedVector | None]
    """Each window's cached vector, or None."""
    fingerprint: ModelFingerprint | None
    """None when the model's files could not be found to identify it: nothing is cached then."""
    warnings: list[str]

    @property
    def found(self) -> int:
        return sum(entry is not None for entry in self.entries)

    @property
    def oldest(self) -> float | None:
        """When the oldest of the found vectors was stored."""
        return min((entry.stored for entry in self.entries if entry is not None), default=None)


def look_up_windows(
    cache_dir: Path,
    model: str | None,
    texts: Sequence[str],
    *,
    precision: str = DEFAULT_PRECISION,
    factory: str | None = None,
) -> CacheLookup:
    """Find the cached vectors of ``texts`` for ``model``, without loading the model."""
    with VectorCache.open(cache_dir) as cache:
        fingerprint = fingerprint_model(model, precision, factory=factory, hash_large_file=cache.file_sha256)
        dimension = cache.dimension_of(fingerprint.digest) if fingerprint is not None else None
        entries: list[CachedVector | None] = [None] * len(texts)
        if fingerprint is not None and dimension is not None:
            entries = ModelCache(cache, fingerprint, dimension).lookup(texts)
        return CacheLookup(entries, fingerprint, list(cache.warnings))


def identify_model(
    cache_dir: Path, model: str | None, precision: str = DEFAULT_PRECISION, factory: str | None = None
) -> ModelFingerprint | None:
    """The fingerprint of ``model``, with the cache remembering the hashes of its weights."""
    with VectorCache.open(cache_dir) as cache:
        return fingerprint_model(model, precision, factory=factory, hash_large_file=cache.file_sha256)


def fill_from_cache(index: VectorIndex, entries: Sequence[CachedVector | None]) -> list[int]:
    """Fill every row with a cached vector of the index's dimension; the rows still to embed, in order."""
    usable = [
        (row, entry)
        for row, entry in enumerate(entries)
        if entry is not None and entry.vector.shape == (index.dimension,)
    ]
    if usable:
        vectors = np.stack([entry.vector for _, entry in usable])
        index.fill([row for row, _ in usable], vectors, [entry.extent for _, entry in usable])
    filled = {row for row, _ in usable}
    return [row for row in range(index.window_count) if row not in filled]


def build_index(
    corpus: Corpus,
    params: WindowParams,
    embedder: Embedder,
    *,
    cache: ModelCache | None = None,
    on_step: OnStep = _ignore_step,
    should_stop: Callable[[], bool] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> VectorIndex:
    """Cut ``corpus`` into windows and give each a vector: from ``cache`` if it has it, else embedded.

    Each embedded batch is stored in the cache as it is made, so an interrupted run keeps its work.
    """
    windows = cut_corpus(corpus, params)
    on_step(WindowsCut(len(windows), params))
    index = VectorIndex(windows, embedder.dimension)
    texts = window_texts(corpus, windows)
    missing = list(range(len(windows)))
    if cache is not None:
        missing = fill_from_cache(index, cache.lookup(texts))
        on_step(VectorsFromCache(len(windows) - len(missing), len(windows)))
    missing_texts = [texts[row] for row in missing]
    done = 0
    for batch in embed_in_batches(embedder, missing_texts, batch_size=batch_size, should_stop=should_stop):
        batch_texts = missing_texts[done : done + len(batch)]
        extents = embedder.reading_extents(batch_texts)
        index.fill(missing[done : done + len(batch)], batch, extents)
        if cache is not None:
            cache.store(batch_texts, batch, extents)
        done += len(batch)
        on_step(WindowsEmbedded(done, len(missing), embedder.name))
    on_step(IndexReady(index.window_count, index.dimension))
    return index


def search_index(index: VectorIndex, embedder: Embedder, query: str, k: int) -> SearchResult:
    """Embed ``query`` and rank the index against it."""
    return rank(index, embedder.encode_query(query), k)


def window_counts(corpus: Corpus, params: WindowParams) -> dict[str, int]:
    """How many windows each file of ``corpus`` is cut into."""
    return {source.path: len(cut_windows(source.path, source.text, params)) for source in corpus.files}
