"""Stored indexes: written whole, read back exactly, keyed by everything that makes their windows, and
taken by a run only from the model that made them."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from raglens.configuration import RetrievalConfig
from raglens.corpus import CorpusOptions, load_corpus
from raglens.embedding_events import ModelChoice, ModelReady, ReadingExtent
from raglens.index import VectorIndex
from raglens.run import ConfigurationRun, EngineSettings
from raglens.stored_index import (
    CUT_FORMAT,
    INDEX_FOLDER,
    KEPT_INDEXES,
    IndexPlace,
    cut_with_stored_index,
    find_stored_index,
    index_key,
    load_stored_index,
    store_index,
    stored_indexes,
)
from raglens.windows import Unit, WindowParams, WindowSet, cut_window_set, cut_windows
from tests.conftest import SAMPLE_CORPUS
from tests.unit.test_run import DIMENSION, PARAMS, Started

FINGERPRINT = "f" * 64
CHOICE = ModelChoice()


CORPUS = replace(load_corpus(SAMPLE_CORPUS, CorpusOptions()), identity="sample files as read")


def window_set(params: WindowParams = PARAMS) -> WindowSet:
    return cut_window_set(CORPUS, params)


def complete_index(windows: WindowSet, seed: int = 0) -> VectorIndex:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(len(windows.windows), DIMENSION)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = VectorIndex(windows.windows, DIMENSION)
    extents = [ReadingExtent(row + 1, 10 * row) for row in range(len(windows.windows))]
    index.fill(range(len(windows.windows)), vectors, extents)
    return index


def test_a_stored_index_reads_back_row_for_row(tmp_path: Path) -> None:
    windows = window_set()
    index = complete_index(windows)
    assert store_index(tmp_path, "k1", index, FINGERPRINT, CORPUS)
    stored = load_stored_index(tmp_path, "k1", CORPUS, PARAMS)
    assert stored is not None and stored.fingerprint == FINGERPRINT
    taken = VectorIndex.from_stored(windows.windows, stored)
    assert isinstance(stored.vectors, np.memmap), "read where they lie, not copied"
    assert taken.is_complete and taken.dimension == DIMENSION
    assert np.array_equal(taken.snapshot().vectors, index.snapshot().vectors)
    assert [taken.extent(row) for row in range(5)] == [index.extent(row) for row in range(5)]
    taken.fill([0], np.ones((1, DIMENSION), np.float32))  # a filled row keeps its vector: no write
    assert np.array_equal(taken.snapshot().vectors[0], index.snapshot().vectors[0])
    assert load_stored_index(tmp_path, "absent", CORPUS, PARAMS) is None
    with pytest.raises(ValueError):
        VectorIndex.from_stored(windows.windows[:-1], stored)


def array_of(folder: Path, name: str) -> Path:
    """The file of the stored index ``k``'s array ``name``, as its description names it."""
    return folder / json.loads((folder / "k.json").read_text())["arrays"][name]


DAMAGES = [
    "no description",
    "no vectors",
    "cut short",
    "empty",
    "other shape",
    "other format",
    "garbage",
    "negative counts",
]


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_stored_index_not_whole_is_not_taken(tmp_path: Path, damage: str) -> None:
    assert store_index(tmp_path, "k", complete_index(window_set()), FINGERPRINT, CORPUS)
    folder = tmp_path / INDEX_FOLDER
    if damage == "no description":
        (folder / "k.json").unlink()
    elif damage == "no vectors":
        array_of(folder, "vectors").unlink()
    elif damage == "cut short":
        data = array_of(folder, "vectors").read_bytes()
        array_of(folder, "vectors").write_bytes(data[: len(data) // 2])
    elif damage == "empty":  # a power cut after the rename of an unsynced file
        array_of(folder, "counts").write_bytes(b"")
    elif damage == "other shape":
        np.save(array_of(folder, "extents"), np.zeros((2, 3), np.int64))
    elif damage == "garbage":
        (folder / "k.json").write_text("[1, 2")
    elif damage == "negative counts":  # as many windows in all, so only their signs are wrong
        counts = np.load(array_of(folder, "counts"))
        counts[0], counts[1] = counts[0] + counts[1] + 1, -1
        np.save(array_of(folder, "counts"), counts)
    else:
        (folder / "k.json").write_text('{"format": 0}')
    assert load_stored_index(tmp_path, "k", CORPUS, PARAMS) is None


def test_a_rewrite_never_pairs_one_writes_arrays_with_anothers_fingerprint(tmp_path: Path) -> None:
    windows = window_set()
    assert store_index(tmp_path, "k", complete_index(windows, seed=1), FINGERPRINT, CORPUS)
    first = load_stored_index(tmp_path, "k", CORPUS, PARAMS)
    assert first is not None
    other = complete_index(windows, seed=2)
    assert store_index(tmp_path, "k", other, "e" * 64, CORPUS)  # the model's files changed
    second = load_stored_index(tmp_path, "k", CORPUS, PARAMS)
    assert second is not None and second.fingerprint == "e" * 64
    assert np.array_equal(second.vectors, other.snapshot().vectors)
    assert np.array_equal(np.asarray(first.vectors), complete_index(windows, seed=1).snapshot().vectors), (
        "the first write's arrays, mapped before the second, are still the first's"
    )
    names = json.loads((tmp_path / INDEX_FOLDER / "k.json").read_text())["arrays"].values()
    assert all((tmp_path / INDEX_FOLDER / name).stat().st_mode & 0o777 == 0o600 for name in names)
    assert (tmp_path / INDEX_FOLDER / "k.json").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / INDEX_FOLDER).stat().st_mode & 0o777 == 0o700


def test_an_incomplete_index_is_never_stored(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        store_index(tmp_path, "k", VectorIndex(window_set().windows, DIMENSION), FINGERPRINT, CORPUS)


def test_a_store_that_cannot_be_written_says_so(tmp_path: Path) -> None:
    blocked = tmp_path / "a file"
    blocked.write_text("")
    assert not store_index(blocked, "k", complete_index(window_set()), FINGERPRINT, CORPUS)


def test_the_key_names_the_files_the_settings_and_the_model() -> None:
    key = index_key("corpus", PARAMS, CHOICE)
    assert key == index_key("corpus", PARAMS, ModelChoice()), "the same again"
    assert key != index_key("another corpus", PARAMS, CHOICE)
    assert key != index_key("corpus", WindowParams(Unit.CHARS, 900, 200), CHOICE)
    assert key != index_key("corpus", WindowParams(Unit.WORDS, 200, 20), CHOICE)
    assert key != index_key("corpus", PARAMS, ModelChoice(precision="bf16"))
    assert key != index_key("corpus", PARAMS, ModelChoice(max_seq_length=128))
    assert key != index_key("corpus", PARAMS, ModelChoice(model="other-model"))


@pytest.mark.parametrize(
    ("params", "digest"),
    [
        (WindowParams(Unit.CHARS, 1000, 200), "1c9a1f0e6f1612b1"),
        (WindowParams(Unit.WORDS, 200, 20), "c0ad690161ba43c6"),
        (WindowParams(Unit.LINES, 40, 5), "31e341bcf7dbd9dd"),
    ],
)
def test_the_cut_is_the_one_stored_indexes_were_cut_with(params: WindowParams, digest: str) -> None:
    """Windows are stored with their index and taken without cutting again: a change to how windows
    are cut must raise ``stored_index.CUT_FORMAT``, and then this pin, or old indexes lend old windows."""
    crlf = "first line\r\nsecond\rthird, a longer line of words\n" * 120  # the line index's other branch
    windows = [*cut_window_set(CORPUS, params).windows, *cut_windows("crlf.txt", crlf, params)]
    cut = hashlib.sha256(repr([(w.path, w.start, w.end, w.line_start, w.line_end) for w in windows]).encode())
    assert (CUT_FORMAT, cut.hexdigest()[:16]) == (1, digest), (
        "the cut changed: raise CUT_FORMAT, then this pin"
    )


def test_stored_windows_are_the_cut_windows(tmp_path: Path) -> None:
    for params in (PARAMS, WindowParams(Unit.WORDS, 200, 20), WindowParams(Unit.LINES, 40, 5)):
        windows = window_set(params)
        assert store_index(tmp_path, "k", complete_index(windows), FINGERPRINT, CORPUS)
        stored = load_stored_index(tmp_path, "k", CORPUS, params)
        assert stored is not None and stored.window_set.texts is None
        assert list(stored.window_set.windows) == list(windows.windows)
        assert stored.window_set.windows.file_rows() == windows.windows.file_rows()
    other = replace(CORPUS, files=CORPUS.files[:-1])
    assert load_stored_index(tmp_path, "k", other, params) is None, "windows of other files"


def test_nothing_is_kept_without_a_cache_a_named_corpus_or_vectors(tmp_path: Path) -> None:
    assert find_stored_index(None, CORPUS, PARAMS, CHOICE) is None
    assert find_stored_index(tmp_path, replace(CORPUS, identity=None), PARAMS, CHOICE) is None
    assert find_stored_index(tmp_path, CORPUS, PARAMS, ModelChoice(model="bm25")) is None
    place = find_stored_index(tmp_path, CORPUS, PARAMS, CHOICE)
    assert place is not None and place.found is None
    windows, _ = cut_with_stored_index(CORPUS, PARAMS, tmp_path, CHOICE)
    assert windows.texts is not None, "cut, with their texts"
    assert store_index(tmp_path, place.key, complete_index(windows), FINGERPRINT, CORPUS)
    stored_windows, place = cut_with_stored_index(CORPUS, PARAMS, tmp_path, CHOICE)
    assert place is not None and place.found is not None
    assert stored_windows.texts is None and list(stored_windows.windows) == list(windows.windows)


def test_only_the_most_recent_indexes_are_kept(tmp_path: Path) -> None:
    index = complete_index(window_set())
    for number in range(KEPT_INDEXES + 2):
        assert store_index(tmp_path, f"k{number}", index, FINGERPRINT, CORPUS)
        about = tmp_path / INDEX_FOLDER / f"k{number}.json"
        os.utime(about, ns=(number * 10**9, number * 10**9))
    (tmp_path / INDEX_FOLDER / "orphan.1-2.vectors.npy").write_bytes(b"half")  # its writer was killed
    os.utime(tmp_path / INDEX_FOLDER / "orphan.1-2.vectors.npy", ns=(0, 0))
    store_index(tmp_path, "newest", index, FINGERPRINT, CORPUS)
    kept = [key for key, _ in stored_indexes(tmp_path)]
    assert len(kept) == KEPT_INDEXES and kept[0] == "newest" and "k0" not in kept
    assert not (tmp_path / INDEX_FOLDER / "orphan.1-2.vectors.npy").exists()
    described = {path.name.split(".")[0] for path in (tmp_path / INDEX_FOLDER).glob("*.npy")}
    assert described == set(kept), "only arrays a description names are left"
    assert not list((tmp_path / INDEX_FOLDER).glob("k0.*")), "all of a forgotten index goes"


def run_with_stored(
    tmp_path: Path, fingerprint: str, *, ready_first: bool
) -> tuple[ConfigurationRun, Started]:
    windows = window_set()
    assert store_index(tmp_path, "k", complete_index(windows), FINGERPRINT, CORPUS)
    place = IndexPlace(tmp_path, "k", load_stored_index(tmp_path, "k", CORPUS, PARAMS))
    started = Started()
    run = ConfigurationRun(1, RetrievalConfig(PARAMS), EngineSettings(), start_process=started)  # type: ignore[arg-type]
    run.start()
    ready = ModelReady("fake", DIMENSION, 256, "cpu", "fp32", "fake", cache_fingerprint=fingerprint)
    if ready_first:
        assert not run.model_ready(ready)
    without_texts = replace(windows, texts=None)  # as cut where an index is stored: taken, it needs none
    run.set_windows(CORPUS, without_texts, None, place)
    if not ready_first:
        assert started.processes[0].sent == [], "the set waits for the model to say which it is"
        run.model_ready(ready)
    return run, started


@pytest.mark.parametrize("ready_first", [True, False])
def test_a_run_takes_a_stored_index_of_its_own_model_and_sends_nothing(
    tmp_path: Path, ready_first: bool
) -> None:
    run, started = run_with_stored(tmp_path, FINGERPRINT, ready_first=ready_first)
    assert run.index_taken and run.is_complete and run.from_cache == len(run.windows)
    assert started.processes[0].sent == []
    assert run.index_to_store() is None, "taken from where it would be stored"


@pytest.mark.parametrize("ready_first", [True, False])
def test_another_models_stored_index_is_not_taken(tmp_path: Path, ready_first: bool) -> None:
    run, started = run_with_stored(tmp_path, "0" * 64, ready_first=ready_first)
    assert not run.index_taken and not run.is_complete
    [(_, texts, _)] = started.processes[0].sent
    assert texts == window_set().texts, "the usual way: every text, sliced now, to the process"
    assert run.index_place is not None and run.index_place.found is None
