from __future__ import annotations

import threading

import numpy as np
import pytest

from raglens.corpus import CorpusOptions
from raglens.errors import IndexingCancelled
from raglens.pipeline import (
    FilesFound,
    IndexReady,
    PipelineStep,
    WindowsCut,
    WindowsEmbedded,
    build_index,
    cut_corpus,
    read_corpus,
    search_index,
    window_counts,
)
from raglens.windows import WindowParams
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
    index = build_index(corpus, WindowParams(), HashingEmbedder(), on_step=steps.append, batch_size=2)
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
    index = build_index(corpus, WindowParams(), embedder)
    assert list(index.windows) == cut_corpus(corpus, WindowParams())
    assert sum(window_counts(corpus, WindowParams()).values()) == index.window_count
    result = search_index(index, embedder, "workers lease jobs", 3)
    assert {hit.window.path for hit in result.hits} == {"queues.md"}
    assert np.all(np.diff([hit.score for hit in result.hits]) <= 0)


def test_build_stops_when_asked(corpus_root) -> None:  # type: ignore[no-untyped-def]
    corpus = read_corpus(corpus_root, CorpusOptions())
    stop = threading.Event()
    steps: list[PipelineStep] = []

    def stop_after_first_batch(step: PipelineStep) -> None:
        steps.append(step)
        if isinstance(step, WindowsEmbedded):
            stop.set()

    with pytest.raises(IndexingCancelled):
        build_index(
            corpus,
            WindowParams(),
            HashingEmbedder(),
            on_step=stop_after_first_batch,
            should_stop=stop.is_set,
            batch_size=1,
        )
    assert sum(isinstance(s, WindowsEmbedded) for s in steps) == 1
    assert not any(isinstance(s, IndexReady) for s in steps)
