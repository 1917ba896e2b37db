"""Rung-1 naive RAG end to end, narrating each step: corpus, windows, vectors, ranking."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from raglens.corpus import Corpus, CorpusOptions, require_indexable
from raglens.corpus_memo import scan_remembering
from raglens.embedding import DEFAULT_BATCH_SIZE, Embedder
from raglens.engine import Engines
from raglens.index import IndexSnapshot, VectorIndex
from raglens.indexing import IndexBuilder, cached_batch
from raglens.pipeline_steps import (
    FilesFound,
    IndexReady,
    IndexTaken,
    PipelineStep,
    VectorsFromCache,
    WindowsCut,
    WindowsEmbedded,
)
from raglens.search import SearchResult, rank
from raglens.stored_index import cut_with_stored_index, store_index, take_stored_index
from raglens.vector_cache import CachedVector, ModelCache
from raglens.windows import WindowParams, window_texts

OnStep = Callable[[PipelineStep], None]


def _ignore_step(step: PipelineStep) -> None:
    """The default narrator, which says nothing."""


def read_corpus(
    path: str | os.PathLike[str],
    options: CorpusOptions,
    *,
    cache_dir: Path | None = None,
    on_step: OnStep = _ignore_step,
) -> Corpus:
    """Read the corpus at ``path`` (an error if nothing is indexable) and narrate what was found; with
    ``cache_dir``, the files unchanged since the last run are not read again (``corpus_memo``)."""
    scan = scan_remembering(path, options, cache_dir)
    if scan.memo_to_save is not None:
        scan.memo_to_save.save()
    corpus = scan.corpus
    require_indexable(corpus, str(path))
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
    with every window cached, no model is opened for the windows at all. Where the files are named
    (``corpus.identity``), the complete index is stored, and taken whole (memory-mapped) by the next
    run on the same files with the same model and windows: no text is looked up (``stored_index``).
    """
    folder = cache.cache.path.parent if cache is not None else None
    window_set, place = cut_with_stored_index(corpus, params, folder, engines.choice)
    windows = window_set.windows
    on_step(WindowsCut(len(windows), params))
    if cache is not None and place is not None and place.found is not None:
        dimension = engines.for_queries().dimension  # opened for the question anyway
        taken = take_stored_index(place, windows, cache.fingerprint.digest, dimension)
        if taken is not None:
            on_step(IndexTaken(taken.window_count))
            on_step(IndexReady(taken.window_count, taken.dimension))
            return taken
    texts = window_set.texts if window_set.texts is not None else window_texts(corpus, windows)
    entries: list[CachedVector | None] = cache.lookup(texts) if cache is not None else [None] * len(texts)
    missing = [row for row, entry in enumerate(entries) if entry is None]
    if cache is not None:
        on_step(VectorsFromCache(len(windows) - len(missing), len(windows)))
    builder = IndexBuilder(texts, missing, engines.for_windows, cache=cache, batch_size=batch_size)
    # Chosen for the distinct texts the builder embeds (a text several windows share, once).
    engine = engines.for_windows(builder.texts_to_embed) if missing else engines.for_queries()
    index = VectorIndex(windows, engine.dimension)
    cached = cached_batch(entries)
    index.fill(cached.rows, cached.vectors, cached.extents)
    while (batch := builder.next_batch()) is not None:
        index.fill(batch.rows, batch.vectors, batch.extents)
        assert builder.embedder is not None
        on_step(WindowsEmbedded(len(missing) - builder.pending_count, len(missing), builder.embedder.name))
    on_step(IndexReady(index.window_count, index.dimension))
    if place is not None and cache is not None:
        store_index(place.cache_dir, place.key, index, cache.fingerprint.digest, corpus)  # for the next run
    return index


def search_index(index: IndexSnapshot, embedder: Embedder, query: str, k: int) -> SearchResult:
    """Embed ``query`` and rank the index against it."""
    return rank(index, embedder.encode_query(query), k)
