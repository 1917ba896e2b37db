from __future__ import annotations

import mmap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from raglens.embedding_events import ReadingExtent
from raglens.index import VectorIndex
from raglens.windows import Unit, Window


def _index(count: int = 5, dimension: int = 3) -> VectorIndex:
    windows = [Window("a.txt", Unit.CHARS, i, i, i + 1, 1, 1) for i in range(count)]
    return VectorIndex(windows, dimension)


def test_batches_fill_their_rows() -> None:
    index = _index()
    assert (index.embedded_count, index.window_count, index.is_complete) == (0, 5, False)
    index.fill(range(2), np.full((2, 3), 0.5, dtype=np.float32))
    index.fill(range(2, 5), np.full((3, 3), 0.25, dtype=np.float32))
    assert index.is_complete
    vectors = index.snapshot().vectors
    assert vectors[:2].tolist() == [[0.5] * 3] * 2
    assert vectors[2:].tolist() == [[0.25] * 3] * 3
    assert vectors.dtype == np.float32


@given(st.permutations(range(8)), st.integers(1, 8))
def test_rows_filled_in_any_order_are_counted_once_and_kept_in_row_order(order: list[int], cut: int) -> None:
    index = _index(count=8, dimension=2)
    first, rest = order[:cut], order[cut:]
    index.fill(first, np.array([[row, -row] for row in first], dtype=np.float32))
    index.fill(first[:1], np.array([[first[0], -first[0]]], dtype=np.float32))  # again: no double count
    assert index.embedded_count == len(first)
    assert index.snapshot().embedded_rows().tolist() == sorted(first)
    assert index.snapshot().vectors[:, 0].tolist() == sorted(first)
    index.fill(
        rest,
        np.array([[row, -row] for row in rest], dtype=np.float32),
        [ReadingExtent(row, row) for row in rest],
    )
    assert index.is_complete
    assert index.snapshot().vectors[:, 0].tolist() == list(range(8))
    assert all(index.extent(row) == ReadingExtent(row, row) for row in rest)


def test_a_snapshot_is_read_only_and_leaves_the_index_fillable() -> None:
    index = _index()
    index.fill([0], np.ones((1, 3), dtype=np.float32))
    snapshot = index.snapshot()
    with pytest.raises(ValueError):
        snapshot.vectors[0, 0] = 2.0
    with pytest.raises(ValueError):
        snapshot.storage[1, 0] = 2.0
    index.fill(range(1, 5), np.ones((4, 3), dtype=np.float32))  # the index's own storage stays writable
    complete = index.snapshot()
    with pytest.raises(ValueError):
        complete.vectors[0, 0] = 2.0
    index.fill([0], np.full((1, 3), 9.0, dtype=np.float32))  # a filled row is kept, never replaced
    assert complete.vectors[0].tolist() == [1.0, 1.0, 1.0]


@given(st.permutations(range(12)), st.integers(0, 12), st.integers(0, 12))
def test_a_snapshot_ranks_as_it_was_taken_whatever_is_filled_after(
    order: list[int], before: int, after: int
) -> None:
    """A ranking worker racing the UI thread, made deterministic: rows filled between snapshot and rank."""
    from raglens.search import rank

    rng = np.random.default_rng(len(order) * 31 + before)
    vectors = rng.normal(size=(12, 4)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = vectors[order[0]] + 0.1
    index = _index(count=12, dimension=4)
    taken = order[:before]
    index.fill(taken, vectors[taken])
    snapshot = index.snapshot()
    later = order[before : before + after]
    index.fill(later, vectors[later])  # what the UI thread does while the worker ranks
    if not taken:
        assert snapshot.embedded_count == 0
        return
    result = rank(snapshot, query, 3)
    oracle = sorted(taken, key=lambda row: (-float(vectors[row] @ query), row))[:3]
    assert [hit.row for hit in result.hits] == oracle
    assert result.ranked_count == len(taken) and result.ranked_rows.tolist() == sorted(taken)


def test_wrong_shapes_and_rows_are_refused() -> None:
    index = _index(count=2)
    with pytest.raises(ValueError, match="shape"):
        index.fill([0], np.ones((1, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="outside"):
        index.fill([0, 2], np.ones((2, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="extents"):
        index.fill([0], np.ones((1, 3), dtype=np.float32), [])
    assert index.embedded_count == 0


@given(st.lists(st.lists(st.integers(0, 11), unique=True), max_size=4), st.data())
def test_each_rows_reading_extent_is_the_first_one_given(
    batches: list[list[int]], data: st.DataObject
) -> None:
    index = _index(12, 2)
    first: dict[int, ReadingExtent] = {}
    for rows in batches:
        extents = [
            ReadingExtent(data.draw(st.integers(0, 600)), data.draw(st.integers(0, 1000))) for _ in rows
        ]
        index.fill(rows, np.ones((len(rows), 2), np.float32), extents)
        for row, extent in zip(rows, extents, strict=True):
            first.setdefault(row, extent)
    assert [index.extent(row) for row in range(12)] == [first.get(row) for row in range(12)]


def _resident_pages(index: VectorIndex) -> int:
    """How many of the matrix's pages the system backs now (Linux's mincore, through ctypes)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    vectors, _, _ = index.stored_arrays()
    address, size = vectors.__array_interface__["data"][0], vectors.nbytes
    start = address - address % mmap.PAGESIZE
    pages = (address + size - start + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    flags = (ctypes.c_ubyte * pages)()
    assert libc.mincore(ctypes.c_void_p(start), ctypes.c_size_t(address + size - start), flags) == 0
    return sum(flag & 1 for flag in flags)


@pytest.mark.skipif(not hasattr(mmap.mmap, "madvise"), reason="no madvise here")
def test_faulting_in_backs_every_page_and_keeps_the_rows_filled_meanwhile() -> None:
    index = _index(3000, 384)  # 4.6 MB: two calls
    index.fill([7], np.full((1, 384), 0.5, np.float32))
    assert _resident_pages(index) < 10, "a fresh matrix is backed only where it was written"
    asked = []

    def cancelled() -> bool:
        """Before the second call, fill a row already backed and one about to be, as the app's thread
        does meanwhile."""
        asked.append(True)
        if len(asked) == 2:
            index.fill([1, 2999], np.full((2, 384), 0.25, np.float32))
        return False

    if not index.fault_in(cancelled):
        pytest.skip("this kernel has no MADV_POPULATE_WRITE (Linux before 5.14)")
    assert len(asked) == 2
    vectors, _, _ = index.stored_arrays()
    assert _resident_pages(index) >= vectors.nbytes // mmap.PAGESIZE
    assert (vectors[7] == 0.5).all() and (vectors[[1, 2999]] == 0.25).all(), "what was filled is kept"
    assert not vectors[[0, 8, 2998]].any() and index.embedded_count == 3


def test_faulting_in_stops_when_cancelled_or_where_it_cannot() -> None:
    index = _index(3000, 384)
    assert not index.fault_in(lambda: True)
    assert not _index(3, 0).fault_in(), "no vectors, no mapping of its own"

    class OldKernel:
        """A mapping whose madvise refuses the advice, as a kernel before 5.14 does (EINVAL)."""

        def __len__(self) -> int:
            return 8 << 20

        def madvise(self, *args: int) -> None:
            raise OSError(22, "Invalid argument")

    index._mapping = OldKernel()  # type: ignore[assignment]
    assert not index.fault_in()


def test_an_index_off_linux_maps_its_memory_as_that_system_can_and_faults_it_in_as_rows_arrive(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Windows has no MAP_PRIVATE (a mapping of its paging file) and no system but Linux has
    MADV_POPULATE_WRITE: the index still fills and ranks, and backing it ahead says it cannot."""
    import raglens.index

    monkeypatch.delattr(mmap, "MAP_PRIVATE")
    monkeypatch.setattr(raglens.index, "MADV_POPULATE_WRITE", None)
    index = _index(3000, 384)
    assert index.maps_its_own_memory and not index.fault_in()
    index.fill([5], np.full((1, 384), 0.5, np.float32))
    vectors, _, _ = index.stored_arrays()
    assert (vectors[5] == 0.5).all() and not vectors[4].any()
