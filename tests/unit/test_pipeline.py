from __future__ import annotations

import numpy as np
import pytest

from raglens.corpus import CorpusOptions
from raglens.engine import Engines
from raglens.pipeline import build_index, read_corpus, search_index
from raglens.pipeline_steps import FilesFound, IndexReady, PipelineStep, WindowsCut, WindowsEmbedded
from raglens.windows import WindowParams, cut_corpus
from tests.conftest import MakeTree
from tests.fakes import HashingEmbedder


@pytest.fixture
def corpus_root(make_tree: MakeTree):  # type: ignore[no-untyped-def]
    return make_tree(
        {
            "cooking.md": "How to bake bread: flour, water, salt and yeast. " * 30,
            "queues.md": "A queue holds jobs; workers lease jobs and acknowledge them. " * 30,
            "empty.txt": "",
        }
    )


def test_steps_are_narrated_in_order(corpus_root) -> None:  # type: ignore[no-untyped-def]
    steps: list[PipelineStep] = []
    corpus = read_corpus(corpus_root, CorpusOptions(), on_step=steps.append)
    index = build_index(
        corpus, WindowParams(), Engines.serving(HashingEmbedder()), on_step=steps.append, batch_size=2
    ).snapshot()
    assert steps[0] == FilesFound(file_count=2, skipped_count=1)
    assert steps[1] == WindowsCut(window_count=index.window_count, params=WindowParams())
    embedded = [s for s in steps if isinstance(s, WindowsEmbedded)]
    total = index.window_count
    assert [s.done for s in embedded] == [min(done, total) for done in range(2, total + 2, 2)]
    assert embedded[-1] == WindowsEmbedded(index.window_count, index.window_count, "fake-hashing")
    assert steps[-1] == IndexReady(index.window_count, 64)
    assert [s.describe() for s in steps[:2]] == [
        "found 2 file(s) to index, skipped 1",
        f"cut into {index.window_count} window(s) of 1000/200 chars",
    ]


def test_index_rows_follow_corpus_order_and_search_finds_the_topic(corpus_root) -> None:  # type: ignore[no-untyped-def]
    corpus = read_corpus(corpus_root, CorpusOptions())
    embedder = HashingEmbedder()
    index = build_index(corpus, WindowParams(), Engines.serving(embedder)).snapshot()
    assert list(index.windows) == list(cut_corpus(corpus, WindowParams()))
    result = search_index(index, embedder, "workers lease jobs", 3)
    assert {hit.window.path for hit in result.hits} == {"queues.md"}
    assert np.all(np.diff([hit.score for hit in result.hits]) <= 0)


def test_a_fully_cached_corpus_opens_no_model_for_its_windows(corpus_root, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """With every window cached, build_index asks only for the query engine, never the windows' one."""
    from raglens.vector_cache import VectorCache

    corpus = read_corpus(corpus_root, CorpusOptions())

    class QueryOnly(Engines):
        def for_windows(self, count: int) -> HashingEmbedder:  # type: ignore[override]
            assert count == 0, f"asked to embed {count} window(s) that the cache holds"
            return super().for_windows(count)  # type: ignore[return-value]

    from raglens.vector_cache import ModelCache
    from tests.integration.test_vector_cache import fake_fingerprint

    with VectorCache.open(tmp_path) as cache:
        model_cache = ModelCache(cache, fake_fingerprint(), 64)
        build_index(corpus, WindowParams(), Engines.serving(HashingEmbedder()), cache=model_cache)
        warm = QueryOnly.serving(HashingEmbedder())
        index = build_index(corpus, WindowParams(), warm, cache=model_cache).snapshot()
    assert index.is_complete
