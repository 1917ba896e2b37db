"""py3langid's tables unpacked once into the cache folder and read from there, not held in memory.

Loaded the library's way, the language identifier holds ~75 MiB in every process that checks a
question's language: a 37 MiB table of the byte automaton's moves, 27 MiB of feature weights and
lists of 100k ints. That was a fifth of the explorer's memory at 100k windows, and all of it beside a
small corpus. A question's check reads one move per byte of the question and one weight row per
feature it holds, so the two large tables are read entry by entry from their files (``os.pread``);
memory-mapped instead, each entry read mapped a whole large page-cache folio here (~0.4 MiB, 37 MiB
after one question). Opening the files takes milliseconds where unpacking the model takes ~0.7 s.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import lzma
import os
import shutil
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from raglens.private_files import forget_stale_temporaries, make_private_folder, write_privately

TABLES_FOLDER = "languages"
"""The folder under the cache folder that holds the unpacked tables, one subfolder per model file."""
TABLES_FORMAT = 1
"""Raised when what is written here changes, so tables of an older layout are unpacked anew."""


@dataclass(frozen=True)
class LanguageTables:
    """The arrays py3langid's identifier is made of, in the dtypes its own loader gives them."""

    weights: np.ndarray
    """Each feature's log-probability in each language (a row per feature, a column per language; float16)."""
    priors: np.ndarray
    """Each language's log prior (float32)."""
    languages: np.ndarray
    """Each column's ISO 639 code."""
    moves: np.ndarray
    """The byte automaton's distinct transition rows, 256 entries each, end to end."""
    rows: np.ndarray
    """Each state's row in ``moves`` (int64: the identifier shifts it left by 8)."""
    features: np.ndarray
    """The feature each state completes, or -1 (int32)."""

    def fit_together(self) -> bool:
        """Whether the arrays fit together as one model's (their shapes and dtypes, not their values)."""
        weights, priors, languages, moves = self.weights, self.priors, self.languages, self.moves
        return (
            weights.ndim == 2
            and weights.dtype == np.float16
            and priors.shape == (weights.shape[1],)
            and priors.dtype == np.float32
            and languages.shape == priors.shape
            and languages.dtype.kind == "U"
            and moves.ndim == 1
            and moves.dtype in (np.dtype(np.uint16), np.dtype(np.uint32))
            and moves.size % 256 == 0
            and self.rows.ndim == 1
            and self.rows.dtype == np.int64
            and self.features.shape == self.rows.shape
            and self.features.dtype == np.int32
        )


_NAMES = tuple(field.name for field in dataclasses.fields(LanguageTables))


class StoredEntries:
    """A 1-D array in a ``.npy`` file, read one entry at a time (the automaton's walk takes one per
    byte); the file stays open while this is alive."""

    def __init__(self, descriptor: int, mapped: np.memmap) -> None:
        weakref.finalize(self, os.close, descriptor)
        self._descriptor, self._offset = descriptor, int(mapped.offset)
        self._size, self._length = mapped.dtype.itemsize, len(mapped)
        self._order: Any = "big" if mapped.dtype.str.startswith(">") else "little"

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, at: int) -> int:
        if not 0 <= at < self._length:
            raise IndexError(at)
        data = os.pread(self._descriptor, self._size, self._offset + at * self._size)
        if len(data) != self._size:
            raise IndexError(at)  # the file was cut short since it was opened
        return int.from_bytes(data, self._order)


class StoredRows:
    """A 2-D array in a ``.npy`` file, read the rows asked for (a question's features' weights); the
    file stays open while this is alive."""

    def __init__(self, descriptor: int, mapped: np.memmap) -> None:
        weakref.finalize(self, os.close, descriptor)
        self._descriptor, self._offset = descriptor, int(mapped.offset)
        self.dtype, self.shape = mapped.dtype, mapped.shape
        self._row_bytes = mapped.dtype.itemsize * mapped.shape[1]

    def __getitem__(self, rows: np.ndarray) -> np.ndarray:
        read = np.empty((len(rows), self.shape[1]), dtype=self.dtype)
        for at, row in enumerate(np.asarray(rows).tolist()):
            if not 0 <= row < self.shape[0]:
                raise IndexError(row)
            data = os.pread(self._descriptor, self._row_bytes, self._offset + row * self._row_bytes)
            if len(data) != self._row_bytes:
                raise IndexError(row)
            read[at] = np.frombuffer(data, dtype=self.dtype)
        return read


def identifier_from_tables(cache_dir: Path | None) -> Any:
    """py3langid's identifier (normalised probabilities) over its tables kept in ``cache_dir``,
    unpacked there first if they are not; the library's own load where none can be kept there."""
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier  # type: ignore[import-untyped]

    opened = kept_tables(cache_dir, Path(MODEL_DIR) / MODEL_FILE) if cache_dir is not None else None
    if opened is None:
        return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    weights, priors, languages, moves, rows, features = opened
    return LanguageIdentifier(weights, priors, languages, moves, features, norm_probs=True, tk_row=rows)


def kept_tables(cache_dir: Path, model_file: Path) -> tuple[Any, ...] | None:
    """The identifier's arguments from ``model_file``'s tables kept under ``cache_dir``, unpacked and
    written there first if they are not whole; None if they could not be (a read-only or full disk)."""
    try:
        folder = cache_dir / TABLES_FOLDER / _key(model_file)
        opened = open_tables(folder)
        if opened is not None:
            return opened
        tables = unpack_tables(model_file)
        make_private_folder(folder)
        forget_stale_temporaries(folder)
        for name in _NAMES:
            save = functools.partial(_save_array, array=getattr(tables, name))
            write_privately(folder / f"{name}.npy", save)
    except OSError:
        return None
    return open_tables(folder)


def open_tables(folder: Path) -> tuple[Any, ...] | None:
    """The identifier's arguments from the tables written in ``folder``: the two large ones read from
    their files as asked, the rest in memory; None if any is absent, cut short or unfit."""
    try:
        mapped = LanguageTables(
            **{name: np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False) for name in _NAMES}
        )
    except Exception:  # absent, cut short, damaged: unpacked anew
        return None
    weights_file, moves_file = mapped.weights, mapped.moves
    if not (
        mapped.fit_together() and isinstance(weights_file, np.memmap) and isinstance(moves_file, np.memmap)
    ):
        return None
    try:
        weights = StoredRows(os.open(folder / "weights.npy", os.O_RDONLY | os.O_CLOEXEC), weights_file)
        moves = StoredEntries(os.open(folder / "moves.npy", os.O_RDONLY | os.O_CLOEXEC), moves_file)
    except OSError:
        return None
    return (
        weights,
        np.array(mapped.priors),
        mapped.languages.tolist(),
        moves,
        np.array(mapped.rows),
        np.array(mapped.features),
    )


def unpack_tables(model_file: Path) -> LanguageTables:
    """py3langid's model file (an LZMA-compressed npz), unpacked into arrays as its loader reads it."""
    with tempfile.TemporaryFile(suffix=".npz") as unpacked:
        with lzma.open(model_file) as packed:
            shutil.copyfileobj(packed, unpacked, length=1 << 20)
        unpacked.seek(0)
        with np.load(unpacked, allow_pickle=False) as data:
            return LanguageTables(
                weights=np.asarray(data["ptc"]),
                priors=np.asarray(data["pc"]),
                languages=np.asarray(data["classes"]).astype(str),
                moves=np.asarray(data["nextmove"]),
                rows=np.asarray(data["nextmove_row"]).astype(np.int64),
                features=np.asarray(data["out_feat"]).astype(np.int32),
            )


def _key(model_file: Path) -> str:
    """The subfolder for ``model_file``: its bytes' digest, so another release's model is its own."""
    digest = hashlib.sha256(f"{TABLES_FORMAT}\0".encode())
    digest.update(model_file.read_bytes())
    return digest.hexdigest()[:32]


def _save_array(handle: BinaryIO, array: np.ndarray) -> None:
    np.save(handle, array, allow_pickle=False)


def tables_size(cache_dir: Path) -> int:
    """The bytes the unpacked tables take under ``cache_dir`` (for ``cache info``); 0 if there are none."""
    total = 0
    with contextlib.suppress(OSError):
        for path in (cache_dir / TABLES_FOLDER).rglob("*"):
            if path.is_file():
                total += path.stat().st_size
    return total
