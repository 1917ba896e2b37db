"""A finished index kept in the cache folder, taken whole when the same windows are cut again.

A warm start at 100k windows spent ~1.5 s sending the windows' texts to the embedding process, looking
each up in the vector cache and sending 150 MB of vectors back, though nothing had changed since the
last run. When every file of a corpus was answered for by the memo of files as last read
(:mod:`raglens.corpus_memo`), its texts are those the last run read, so the same windows cut from them
have the same vectors: the index that run completed is stored under a key naming the files' signatures,
the window settings, the windows' offsets and the model as asked for, and is taken whole, memory-mapped.
The model's cache fingerprint, stored with it, must be that of the model now running, so a model whose
files changed never lends its old vectors. Anything wrong with a stored index means the usual path.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

if TYPE_CHECKING:
    from raglens.corpus import Corpus
    from raglens.embedding_events import ModelChoice
    from raglens.index import VectorIndex
    from raglens.windows import Window, WindowParams, WindowSet

INDEX_FOLDER = "indexes"
"""The folder of the cache folder that holds the stored indexes."""
FORMAT = 1
KEPT_INDEXES = 3
"""Stored indexes kept, the most recently written (one of 100k windows takes ~150 MB)."""
_VECTORS, _EXTENTS, _ABOUT = ".vectors.npy", ".extents.npy", ".json"


@dataclass(frozen=True, eq=False)
class StoredIndex:
    """A complete index's vectors and reading extents, row for row, and the model that made them."""

    vectors: np.ndarray
    """(n, d) float32 unit rows, read-only (memory-mapped)."""
    token_counts: np.ndarray
    chars_read: np.ndarray
    fingerprint: str
    """The model's cache fingerprint: precision, token limit and its files' hashes."""

    @property
    def window_count(self) -> int:
        return len(self.vectors)


@dataclass(frozen=True, eq=False)
class IndexPlace:
    """Where a window set's complete index is kept, and what was found there when it was cut."""

    cache_dir: Path
    key: str
    found: StoredIndex | None


def find_stored_index(
    cache_dir: Path | None,
    corpus_identity: str | None,
    params: WindowParams,
    windows: Sequence[Window],
    choice: ModelChoice,
) -> IndexPlace | None:
    """The place of ``window_set``'s index and what is stored there; None where none can be kept: no
    cache, a file of the corpus changed too recently to be named, or BM25 (which has no vectors)."""
    from raglens.configuration import is_bm25

    if cache_dir is None or corpus_identity is None or is_bm25(choice.model):
        return None
    key = index_key(corpus_identity, params, windows, choice)
    return IndexPlace(cache_dir, key, load_stored_index(cache_dir, key))


def cut_with_stored_index(
    corpus: Corpus, params: WindowParams, cache_dir: Path | None, choice: ModelChoice
) -> tuple[WindowSet, IndexPlace | None]:
    """Cut ``corpus``'s windows, with the place of their index and what is stored there; the windows'
    texts are left out where an index is stored (taken whole, it needs none)."""
    from raglens.windows import cut_window_set, window_texts

    window_set = cut_window_set(corpus, params, with_texts=False)
    place = find_stored_index(cache_dir, corpus.identity, params, window_set.windows, choice)
    if place is None or place.found is None:
        window_set = replace(window_set, texts=window_texts(corpus, window_set.windows))
    return window_set, place


def take_stored_index(
    place: IndexPlace | None, windows: Sequence[Window], fingerprint: str | None, dimension: int
) -> VectorIndex | None:
    """The index stored at ``place`` for ``windows``, if the model running (its cache ``fingerprint``
    and ``dimension``) made it; None otherwise, and then the index is built the usual way."""
    from raglens.index import VectorIndex

    stored = place.found if place is not None else None
    if stored is None or fingerprint is None or stored.fingerprint != fingerprint:
        return None
    if stored.vectors.shape[1] != dimension or stored.window_count != len(windows):
        return None
    return VectorIndex.from_stored(windows, stored)


def index_key(
    corpus_identity: str, params: WindowParams, windows: Sequence[Window], choice: ModelChoice
) -> str:
    """The name of the index of ``windows``, cut with ``params`` from the files ``corpus_identity``
    names, as the model ``choice`` asks for embeds it. The offsets are in the key, so a raglens that
    cuts windows otherwise never takes an index of another's windows."""
    digest = hashlib.sha256(f"{FORMAT}\0{corpus_identity}\0{params!r}\0".encode())
    digest.update(
        f"{choice.model!r}\0{choice.precision}\0{choice.max_seq_length}\0{choice.factory}\0".encode()
    )
    offsets = np.fromiter((value for w in windows for value in (w.start, w.end)), np.int64, 2 * len(windows))
    digest.update(offsets.tobytes())
    paths = dict.fromkeys(window.path for window in windows)  # each file once, in corpus order
    digest.update("\0".join(paths).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


def load_stored_index(cache_dir: Path, key: str) -> StoredIndex | None:
    """The index stored under ``key``, memory-mapped; None when there is none or it is not whole."""
    folder = cache_dir / INDEX_FOLDER
    try:
        about = json.loads((folder / (key + _ABOUT)).read_text(encoding="utf-8"))
        if about.get("format") != FORMAT:
            return None
        vectors = np.load(folder / (key + _VECTORS), mmap_mode="r", allow_pickle=False)
        extents = np.load(folder / (key + _EXTENTS), allow_pickle=False)
    except (OSError, ValueError, TypeError, AttributeError):
        return None
    count, dimension = about.get("windows"), about.get("dimension")
    if vectors.dtype != np.float32 or vectors.shape != (count, dimension):
        return None
    if extents.dtype != np.int64 or extents.shape != (2, count):
        return None
    return StoredIndex(vectors, extents[0], extents[1], str(about.get("fingerprint")))


def store_index(cache_dir: Path, key: str, index: VectorIndex, fingerprint: str) -> bool:
    """Write the complete ``index`` under ``key`` (each file whole, then renamed; the description last,
    which is what makes it count); False when it could not be written."""
    if not index.is_complete:
        raise ValueError("only a complete index is stored")
    folder = cache_dir / INDEX_FOLDER
    vectors, token_counts, chars_read = index.stored_arrays()
    about = {"format": FORMAT, "windows": index.window_count, "dimension": index.dimension}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write_whole(folder / (key + _VECTORS), lambda handle: np.save(handle, vectors))
        _write_whole(
            folder / (key + _EXTENTS), lambda handle: np.save(handle, np.stack([token_counts, chars_read]))
        )
        text = json.dumps({**about, "fingerprint": fingerprint}).encode()
        _write_whole(folder / (key + _ABOUT), lambda handle: handle.write(text))
    except OSError:
        forget_index(folder, key)
        return False
    _forget_old_indexes(folder)
    return True


def _write_whole(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write ``path`` through a temporary file renamed over it, so no reader sees half of it."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    try:
        with temporary.open("wb") as handle:
            write(handle)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        raise


def forget_index(folder: Path, key: str) -> None:
    """Delete the index stored under ``key``, its description first."""
    for suffix in (_ABOUT, _VECTORS, _EXTENTS):
        with contextlib.suppress(OSError):
            (folder / (key + suffix)).unlink(missing_ok=True)


def stored_indexes(cache_dir: Path) -> list[tuple[str, int]]:
    """The keys of the indexes stored in ``cache_dir`` and their sizes in bytes, newest first."""
    folder = cache_dir / INDEX_FOLDER
    found: list[tuple[str, int, int]] = []
    try:
        for about in folder.glob("*" + _ABOUT):
            key = about.name.removesuffix(_ABOUT)
            size = sum(_size(folder / (key + suffix)) for suffix in (_ABOUT, _VECTORS, _EXTENTS))
            found.append((key, size, about.stat().st_mtime_ns))
    except OSError:
        return []
    return [(key, size) for key, size, _ in sorted(found, key=lambda entry: -entry[2])]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _forget_old_indexes(folder: Path) -> None:
    """Keep the :data:`KEPT_INDEXES` most recent indexes; delete the rest and stray temporary files."""
    for key, _ in stored_indexes(folder.parent)[KEPT_INDEXES:]:
        forget_index(folder, key)
    hour_ago = time.time() - 3600
    with contextlib.suppress(OSError):
        for stray in folder.iterdir():
            # A writer killed mid-write leaves a temporary file, or arrays without their description.
            name = stray.name
            key = name.removesuffix(_VECTORS).removesuffix(_EXTENTS)
            orphan = key != name and not (folder / (key + _ABOUT)).exists()
            half_written = name.endswith(".tmp") or orphan
            if half_written and stray.stat().st_mtime < hour_ago:
                stray.unlink(missing_ok=True)
