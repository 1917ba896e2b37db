"""A window set larger than one part crosses to a real embedding process in parts, and every row of it
comes back with its own text's vector (the fake embedder, so 20k windows take seconds)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from raglens.embedding_events import TEXTS_PER_PART, ModelChoice, VectorsEmbedded, WindowsDone
from raglens.embedding_process import EmbeddingProcess
from raglens.embedding_server import CACHED_ROWS_PER_EVENT
from tests.fakes import HashingEmbedder


def indexed(process: EmbeddingProcess, texts: list[str]) -> tuple[dict[int, np.ndarray], list[int]]:
    """Every row's vector, and the number of rows in each event that brought some."""
    process.wait_until_ready(timeout=60)
    process.index_windows(1, texts, first=[len(texts) - 1])
    vectors: dict[int, np.ndarray] = {}
    sizes = []
    while True:
        event = process.next_event(timeout=60)
        assert event is not None, "the process went quiet"
        if isinstance(event, VectorsEmbedded):
            assert not vectors.keys() & set(event.rows)
            vectors.update(zip(event.rows, event.vectors, strict=True))
            sizes.append(len(event.rows))
        elif isinstance(event, WindowsDone):
            return vectors, sizes


def test_a_set_of_several_parts_is_embedded_whole_then_comes_from_the_cache_in_parts(tmp_path: Path) -> None:
    count = max(TEXTS_PER_PART, CACHED_ROWS_PER_EVENT) * 2 + 5  # several parts, and several cached events
    texts = [f"window {row} about queue number {row % 997}" for row in range(count)]
    expected = HashingEmbedder().encode(texts)
    for run in ("embedded", "cached"):
        process = EmbeddingProcess(
            ModelChoice(device="cpu", factory="tests.fakes:HashingEmbedder"), cache_dir=str(tmp_path)
        )
        try:
            vectors, sizes = indexed(process, texts)
        finally:
            process.close()
        assert sorted(vectors) == list(range(count)), run
        np.testing.assert_array_equal(np.stack([vectors[row] for row in range(count)]), expected)
        if run == "cached":
            assert max(sizes) <= CACHED_ROWS_PER_EVENT and len(sizes) > 1, sizes
