"""Rung-1 naive RAG end to end, narrating each step: corpus, windows, vectors, ranking."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from raglens.corpus import Corpus, CorpusOptions, load_corpus
from raglens.display import describe_age
from raglens.embedding import DEFAULT_BATCH_SIZE, Embedder
from raglens.engine import Engines
from raglens.index import IndexSnapshot, VectorIndex
from raglens.indexing import IndexBuilder, cached_batch
from raglens.search import SearchResult, rank
from raglens.vector_cache import CachedVector, ModelCache
from raglens.windows import WindowParams, cut_corpus, window_texts


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


def build_index(
    corpus: Corpus,
    params: WindowParams,
    engines: Engines,
    *,
    cache: ModelCache | None = None,
    on_step: OnStep = _ignore_step,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> VectorIndex:
    """Cut ``corpus`` into windows and give each a vector: from ``cache`` if it has it, else embedded.

    Each embedded batch is stored in the cache as it is made, so an interrupted run keeps its work;
    with every window cached, no model is opened for the windows at all.
    """
    windows = cut_corpus(corpus, params)
    on_step(WindowsCut(len(windows), params))
    texts = window_texts(corpus, windows)
    entries: list[CachedVector | None] = cache.lookup(texts) if cache is not None else [None] * len(texts)
    missing = [row for row, entry in enumerate(entries) if entry is None]
    if cache is not None:
        on_step(VectorsFromCache(len(windows) - len(missing), len(windows)))
    engine = engines.for_windows(len(missing)) if missing else engines.for_queries()
    index = VectorIndex(windows, engine.dimension)
    cached = cached_batch(entries)
    index.fill(cached.rows, cached.vectors, cached.extents)
    builder = IndexBuilder(texts, missing, engines.for_windows, cache=cache, batch_size=batch_size)
    while (batch := builder.next_batch()) is not None:
        index.fill(batch.rows, batch.vectors, batch.extents)
        assert builder.embedder is not None
        on_step(WindowsEmbedded(len(missing) - builder.pending_count, len(missing), builder.embedder.name))
    on_step(IndexReady(index.window_count, index.dimension))
    return index


def search_index(index: IndexSnapshot, embedder: Embedder, query: str, k: int) -> SearchResult:
    """Embed ``query`` and rank the index against it."""
    return rank(index, embedder.encode_query(query), k)
