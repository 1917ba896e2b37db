"""A finished index kept in the cache folder, with its windows, taken whole when the files are unchanged.

A warm start at 100k windows spent ~1.5 s sending the windows' texts to the embedding process, looking
each up in the vector cache and sending 150 MB of vectors back, and 0.6 s cutting the windows, though
nothing had changed since the last run. When every file of a corpus was answered for by the memo of
files as last read (:mod:`raglens.corpus_memo`), its texts are those the last run read, so they cut into
the same windows, which have the same vectors: the index that run completed is stored with its windows
under a key naming the files' signatures (``Corpus.identity``), the window settings, the cut
(:data:`CUT_FORMAT`) and the model as asked for, and is taken whole, its vectors memory-mapped. The
model's cache fingerprint, stored with it, must be that of the model running, so a model whose files
changed never lends its old vectors. Anything wrong with a stored index means the usual way.
"""

from __future__ import annotations

import array
import contextlib
import functools
import hashlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

from raglens.private_files import forget_stale_temporaries, make_private_folder, write_privately
from raglens.windows import Window, WindowColumns, WindowParams, WindowSet, cut_window_set

if TYPE_CHECKING:
    from raglens.corpus import Corpus
    from raglens.embedding_events import ModelChoice
    from raglens.index import VectorIndex

INDEX_FOLDER = "indexes"
"""The folder of the cache folder that holds the stored indexes."""
FORMAT = 1
CUT_FORMAT = 1
"""Which cut of windows the stored windows are: raise it with any change to how windows are cut (a test
pins the cut of the sample corpus), so that no index stored by an older raglens is taken."""
KEPT_INDEXES = 3
"""Stored indexes kept, the most recently written (one of 100k windows takes ~160 MB)."""
_ABOUT = ".json"
"""A stored index's description: its format, size, fingerprint and the names of its arrays."""


@dataclass(frozen=True, eq=False)
class StoredIndex:
    """A complete index's windows, their vectors and reading extents, row for row, and the model that
    made the vectors."""

    window_set: WindowSet
    """The windows as cut when the index was made, without their texts: the same cut of the same files."""
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
    cache_dir: Path | None, corpus: Corpus, params: WindowParams, choice: ModelChoice
) -> IndexPlace | None:
    """The place of the index of ``corpus``'s windows cut with ``params``, as the model ``choice`` names
    embeds them, and what is stored there; None where none can be kept: no cache, a file of the corpus
    changed too recently to be named (``corpus.identity``), or BM25 (which has no vectors)."""
    from raglens.configuration import is_bm25

    if cache_dir is None or corpus.identity is None or is_bm25(choice.model):
        return None
    key = index_key(corpus.identity, params, choice)
    return IndexPlace(cache_dir, key, load_stored_index(cache_dir, key, corpus, params))


def cut_with_stored_index(
    corpus: Corpus, params: WindowParams, cache_dir: Path | None, choice: ModelChoice
) -> tuple[WindowSet, IndexPlace | None]:
    """``corpus``'s windows and the place of their index, with what is stored there: the windows as
    stored, without their texts (taken whole, the index needs none), else cut, with them."""
    place = find_stored_index(cache_dir, corpus, params, choice)
    if place is not None and place.found is not None:
        return place.found.window_set, place
    return cut_window_set(corpus, params), place


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


def index_key(corpus_identity: str, params: WindowParams, choice: ModelChoice) -> str:
    """The name of the index of the windows cut with ``params`` from the files ``corpus_identity``
    names, as the model ``choice`` asks for embeds them (its cache fingerprint is checked when taken)."""
    digest = hashlib.sha256(f"{FORMAT}\0{CUT_FORMAT}\0{corpus_identity}\0{params!r}\0".encode())
    model = f"{choice.model!r}\0{choice.precision}\0{choice.max_seq_length}\0{choice.factory}\0"
    digest.update(model.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


def load_stored_index(cache_dir: Path, key: str, corpus: Corpus, params: WindowParams) -> StoredIndex | None:
    """The index stored under ``key`` of ``corpus``'s windows cut with ``params``, its vectors
    memory-mapped; None when there is none or it is not whole."""
    folder = cache_dir / INDEX_FOLDER
    try:
        about = json.loads((folder / (key + _ABOUT)).read_text(encoding="utf-8"))
        if not isinstance(about, dict) or about.get("format") != FORMAT:
            return None
        arrays = about["arrays"]
        vectors = np.load(folder / arrays["vectors"], mmap_mode="r", allow_pickle=False)
        extents = np.load(folder / arrays["extents"], allow_pickle=False)
        cuts = np.load(folder / arrays["windows"], allow_pickle=False)
        counts = np.load(folder / arrays["counts"], allow_pickle=False)
    except Exception:  # absent, cut short, damaged, replaced meanwhile: the usual way (which stores anew)
        return None
    count, dimension = about.get("windows"), about.get("dimension")
    if vectors.dtype != np.float32 or vectors.shape != (count, dimension):
        return None
    shapes = (extents.shape, cuts.shape, counts.shape)
    if shapes != ((2, count), (4, count), (len(corpus.files),)) or int(counts.sum()) != count:
        return None
    if len(counts) and int(counts.min()) < 0:
        return None
    if {extents.dtype, cuts.dtype, counts.dtype} != {np.dtype(np.int64)}:
        return None
    with contextlib.suppress(OSError):
        os.utime(folder / (key + _ABOUT))  # in use: the last to be forgotten (a read-only cache: still)
    window_set = _window_set(corpus, params, cuts, counts)
    return StoredIndex(window_set, vectors, extents[0], extents[1], str(about.get("fingerprint")))


def _window_set(corpus: Corpus, params: WindowParams, cuts: np.ndarray, counts: np.ndarray) -> WindowSet:
    """The windows stored as ``cuts`` (start, end, first and last line of each), ``counts`` of them for
    each file of ``corpus`` in turn."""
    having = [
        (source.path, count) for source, count in zip(corpus.files, counts.tolist(), strict=True) if count
    ]
    columns = tuple(array.array("q", np.ascontiguousarray(column).tobytes()) for column in cuts)
    windows = WindowColumns(
        params.unit, [path for path, _ in having], [count for _, count in having], columns
    )
    windows.file_rows()  # here, in the reading worker, off the event loop
    return WindowSet(windows, None)


def store_index(cache_dir: Path, key: str, index: VectorIndex, fingerprint: str, corpus: Corpus) -> bool:
    """Write the complete ``index`` of ``corpus``'s windows under ``key`` (each file whole, then renamed;
    the description last, which is what makes it count); False when it could not be written."""
    if not index.is_complete:
        raise ValueError("only a complete index is stored")
    windows = index.windows
    rows = windows.file_rows()
    counts = np.array([len(rows.get(source.path, ())) for source in corpus.files], dtype=np.int64)
    if int(counts.sum()) != len(windows):
        raise ValueError("an index of another corpus's windows")
    cuts = windows.columns()
    vectors, token_counts, chars_read = index.stored_arrays()
    folder = cache_dir / INDEX_FOLDER
    # Arrays under names of this write's own, which its description names: renaming the description
    # over the last one puts every array of this write in place at once, so a reader (or a writer
    # killed half-way) never pairs one write's vectors with another's fingerprint.
    written = f"{key}.{os.getpid()}-{time.time_ns()}"
    arrays = {
        "vectors": vectors,
        "extents": np.stack([token_counts, chars_read]),
        "windows": cuts,
        "counts": counts,
    }
    names = {name: f"{written}.{name}.npy" for name in arrays}
    about = {"format": FORMAT, "windows": index.window_count, "dimension": index.dimension}
    text = json.dumps({**about, "fingerprint": fingerprint, "arrays": names}).encode()
    try:
        make_private_folder(folder)
        for name, array in arrays.items():
            write_privately(folder / names[name], functools.partial(_save_array, array=array))
        write_privately(folder / (key + _ABOUT), lambda handle: handle.write(text))
    except OSError:
        for name in names.values():
            with contextlib.suppress(OSError):
                (folder / name).unlink(missing_ok=True)
        return False
    _forget_old_indexes(folder)
    return True


def _save_array(handle: BinaryIO, array: np.ndarray) -> None:
    np.save(handle, array)


def forget_index(folder: Path, key: str) -> None:
    """Delete the index stored under ``key``: its description first, then every array of the key's."""
    with contextlib.suppress(OSError):
        (folder / (key + _ABOUT)).unlink(missing_ok=True)
        for array in folder.glob(f"{key}.*.npy"):
            array.unlink(missing_ok=True)


def stored_indexes(cache_dir: Path) -> list[tuple[str, int]]:
    """The keys of the indexes stored in ``cache_dir`` and the bytes each takes (its arrays of every
    write, a half-written one's too), the most recently used first."""
    folder = cache_dir / INDEX_FOLDER
    found: list[tuple[str, int, int]] = []
    try:
        for about in folder.glob("*" + _ABOUT):
            key = about.name.removesuffix(_ABOUT)
            size = _size(about) + sum(_size(array) for array in folder.glob(f"{key}.*.npy"))
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
    """Keep the :data:`KEPT_INDEXES` most recently used indexes; delete the rest, the arrays no
    description names (an earlier write's, once a minute old: a reader may have just opened them) and
    temporary files an hour old (a writer killed mid-write)."""
    for key, _ in stored_indexes(folder.parent)[KEPT_INDEXES:]:
        forget_index(folder, key)
    named: set[str] = set()
    with contextlib.suppress(OSError):
        for about in folder.glob("*" + _ABOUT):
            with contextlib.suppress(Exception):
                named.update(json.loads(about.read_text(encoding="utf-8"))["arrays"].values())
    minute_ago = time.time() - 60
    with contextlib.suppress(OSError):
        for array in folder.glob("*.npy"):
            if array.name not in named and array.stat().st_mtime < minute_ago:
                array.unlink(missing_ok=True)
    forget_stale_temporaries(folder)
