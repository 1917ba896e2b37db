"""The one index builder: every pending row gets its vector once, in order, the prioritised rows first;
a text shared by several rows is embedded once."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from raglens.embedding_events import ReadingExtent
from raglens.indexing import IndexBuilder, cached_batch
from raglens.vector_cache import CachedVector
from tests.fakes import HashingEmbedder


def _drain(builder: IndexBuilder) -> list[int]:
    rows: list[int] = []
    while (batch := builder.next_batch()) is not None:
        rows.extend(batch.rows)
    return rows


@given(
    st.lists(st.integers(0, 29), unique=True),
    st.lists(st.integers(0, 40), max_size=10),
    st.integers(1, 7),
    st.integers(0, 5),
)
def test_every_pending_row_is_embedded_once_with_the_prioritised_ones_next(
    pending: list[int], first: list[int], batch_size: int, batches_before: int
) -> None:
    texts = [f"window {row} about queues" for row in range(30)]
    builder = IndexBuilder(texts, pending, lambda count: HashingEmbedder(), batch_size=batch_size)
    done: list[int] = []
    for _ in range(batches_before):
        batch = builder.next_batch()
        if batch is not None:
            done.extend(batch.rows)
    waiting = builder.pending_rows()
    builder.prioritize(first)
    rest = _drain(builder)
    assert sorted(done + rest) == sorted(pending)
    wanted = [row for row in dict.fromkeys(first) if row in waiting]
    assert rest[: len(wanted)] == wanted
    assert [row for row in rest if row not in wanted] == [row for row in waiting if row not in wanted]


def test_batches_carry_the_embedders_vectors_and_extents_by_row() -> None:
    texts = [f"text {i} " * (i + 1) for i in range(10)]
    opened: list[int] = []

    def engine(count: int) -> HashingEmbedder:
        opened.append(count)
        return HashingEmbedder(max_seq_length=6)

    builder = IndexBuilder(texts, [9, 3, 4], engine, batch_size=2)
    first, second = builder.next_batch(), builder.next_batch()
    assert first is not None and second is not None and builder.next_batch() is None
    assert (first.rows, second.rows) == ((9, 3), (4,))
    np.testing.assert_array_equal(first.vectors, HashingEmbedder().encode([texts[9], texts[3]]))
    assert first.extents == tuple(HashingEmbedder(max_seq_length=6).reading_extents([texts[9], texts[3]]))
    assert opened == [3], "the engine is opened once, for the windows still to embed"


def test_nothing_to_embed_opens_no_engine() -> None:
    def engine(count: int) -> HashingEmbedder:
        raise AssertionError("no model should be opened")

    assert IndexBuilder(["a", "b"], [], engine).next_batch() is None


class _CountingEmbedder(HashingEmbedder):
    """Records every text it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return super().encode(texts)


@given(
    st.lists(st.integers(0, 4), min_size=1, max_size=30),
    st.data(),
    st.integers(1, 7),
)
def test_rows_sharing_a_text_are_embedded_once_and_all_get_its_vector(
    text_of_row: list[int], data: st.DataObject, batch_size: int
) -> None:
    texts = [f"window about topic {topic}" for topic in text_of_row]
    pending = data.draw(st.lists(st.sampled_from(range(len(texts))), unique=True))
    first = data.draw(st.lists(st.sampled_from(range(len(texts))), max_size=4))
    embedder = _CountingEmbedder()
    builder = IndexBuilder(texts, pending, lambda count: embedder, batch_size=batch_size)
    builder.prioritize(first)
    assert builder.pending_count == len(pending)
    got: dict[int, np.ndarray] = {}
    while (batch := builder.next_batch()) is not None:
        assert len(batch.rows) == len(batch.vectors) == len(batch.extents)
        for row, vector in zip(batch.rows, batch.vectors, strict=True):
            assert row not in got
            got[row] = vector
        assert builder.pending_count == len(pending) - len(got)
    assert sorted(got) == sorted(pending)
    assert sorted(embedder.texts) == sorted({texts[row] for row in pending}), "each distinct text once"
    for row in pending:
        np.testing.assert_array_equal(got[row], HashingEmbedder().encode([texts[row]])[0])
    # A prioritised row's text comes first, whichever of its rows was asked for.
    wanted = [texts[row] for row in first if row in pending]
    if wanted:
        assert embedder.texts[0] == wanted[0]


class _PoolOfThree(HashingEmbedder):
    """Stands for a pool of three worker processes; records the size of each call."""

    worker_count = 3

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        return super().encode(texts)


def test_a_pool_of_workers_gets_a_batch_for_each_of_them() -> None:
    texts = [f"window {number}" for number in range(20)]
    pool = _PoolOfThree()
    rows = _drain(IndexBuilder(texts, range(20), lambda count: pool, batch_size=4))
    assert pool.calls == [12, 8]
    assert sorted(rows) == list(range(20))


class _MeasuringEmbedder(HashingEmbedder):
    """Records each text it measures (its reading extent) and each batch it embeds."""

    def __init__(self) -> None:
        super().__init__(max_seq_length=6)
        self.measured: list[str] = []
        self.batches: list[list[str]] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return super().encode(texts)

    def reading_extents(self, texts: Sequence[str]) -> list[ReadingExtent]:
        self.measured.extend(texts)
        return super().reading_extents(texts)


@given(
    st.lists(st.integers(1, 12), min_size=1, max_size=40),
    st.lists(st.integers(0, 39), max_size=5),
    st.integers(1, 4),
)
def test_each_run_is_embedded_in_order_of_the_tokens_read_and_each_text_measured_once(
    words_of_row: list[int], first: list[int], batch_size: int
) -> None:
    import raglens.indexing as indexing

    texts = [" ".join(f"w{row}x{word}" for word in range(words)) for row, words in enumerate(words_of_row)]
    embedder = _MeasuringEmbedder()
    builder = IndexBuilder(texts, range(len(texts)), lambda count: embedder, batch_size=batch_size)
    run = 5
    original, indexing.SORTED_AHEAD = indexing.SORTED_AHEAD, run
    try:
        builder.prioritize(first)
        wanted = [row for row in dict.fromkeys(first) if row < len(texts)]
        order: list[int] = []
        while (batch := builder.next_batch()) is not None:
            order.extend(batch.rows)
            expected = HashingEmbedder(max_seq_length=6).reading_extents([texts[row] for row in batch.rows])
            assert batch.extents == tuple(expected), "each row carries its own text's extent"
    finally:
        indexing.SORTED_AHEAD = original
    assert order[: len(wanted)] == wanted, "the rows asked for first, in the order given"
    assert sorted(order) == list(range(len(texts)))
    assert sorted(embedder.measured) == sorted(texts), "every text measured once, ahead of its batch"

    def read(row: int) -> int:
        return min(HashingEmbedder().reading_extents([texts[row]])[0].token_count, 6)

    rest = order[len(wanted) :]
    for start in range(0, len(rest), max(run, batch_size)):
        lengths = [read(row) for row in rest[start : start + max(run, batch_size)]]
        assert lengths == sorted(lengths), "a run is embedded shortest first"


@given(st.lists(st.one_of(st.none(), st.integers(0, 3)), max_size=40))
def test_a_cache_lookup_s_batch_gives_each_found_row_its_entry_s_vector_and_extent(
    found: list[int | None],
) -> None:
    """Rows that share a text share one entry, stacked once: each row still gets its own row of the
    batch, equal to its entry's vector (the oracle stacks a vector a row)."""
    rng = np.random.default_rng(7)
    shared = [
        CachedVector(rng.standard_normal(5).astype(np.float32), ReadingExtent(number, number * 3), 0.0)
        for number in range(4)
    ]
    entries = [shared[number] if number is not None else None for number in found]
    batch = cached_batch(entries)
    expected_rows = tuple(row for row, entry in enumerate(entries) if entry is not None)
    assert batch.rows == expected_rows
    assert batch.extents == tuple(entries[row].extent for row in expected_rows)  # type: ignore[union-attr]
    if expected_rows:
        oracle = np.stack([entries[row].vector for row in expected_rows])  # type: ignore[union-attr]
        assert np.array_equal(batch.vectors, oracle) and batch.vectors.dtype == np.float32
    else:
        assert batch.vectors.shape[0] == 0
