"""Rung-1 naive RAG end to end, narrating each step: corpus, windows, vectors, ranking."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from raglens.corpus import Corpus, CorpusOptions, load_corpus
from raglens.embedding import DEFAULT_BATCH_SIZE, Embedder, embed_in_batches
from raglens.index import VectorIndex
from raglens.search import SearchResult, rank
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


PipelineStep = FilesFound | WindowsCut | WindowsEmbedded | IndexReady
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


def build_index(
    corpus: Corpus,
    params: WindowParams,
    embedder: Embedder,
    *,
    on_step: OnStep = _ignore_step,
    should_stop: Callable[[], bool] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> VectorIndex:
    """Cut ``corpus`` into windows and embed them all, reporting each step through ``on_step``."""
    windows = cut_corpus(corpus, params)
    on_step(WindowsCut(len(windows), params))
    index = VectorIndex(windows, embedder.dimension)
    texts = window_texts(corpus, windows)
    for batch in embed_in_batches(embedder, texts, batch_size=batch_size, should_stop=should_stop):
        index.append(batch)
        on_step(WindowsEmbedded(index.embedded_count, index.window_count, embedder.name))
    on_step(IndexReady(index.window_count, index.dimension))
    return index


def search_index(index: VectorIndex, embedder: Embedder, query: str, k: int) -> SearchResult:
    """Embed ``query`` and rank the index against it."""
    return rank(index, embedder.encode_query(query), k)


def window_counts(corpus: Corpus, params: WindowParams) -> dict[str, int]:
    """How many windows each file of ``corpus`` is cut into."""
    return {source.path: len(cut_windows(source.path, source.text, params)) for source in corpus.files}
