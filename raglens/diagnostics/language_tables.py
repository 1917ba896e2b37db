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
import os
import shutil
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from raglens.private_files import forget_stale_temporaries, make_private_folder, write_privately

TABLES_FOLDER = "languages"
"""The folder under the cache folder that holds the unpacked tables, one subfolder per model file."""
TABLES_FORMAT = 1
"""Increased when what is written here changes, so tables of an older layout are unpacked anew."""
TABLES_WORK_HERE = hasattr(os, "pread")
"""Whether a table can be read entry by entry here (``os.pread`` is not on Windows): else the library
loads its own way."""


@dataclass(frozen=True)
class LanguageTables:
    """The arrays py3langid's identifier is made of, as numpy arrays (its loader gives some as stdlib
    arrays and lists; the values are the same)."""

    weights: np.ndarray
    """Each feature's log-probability in each language: a row per feature, a column per language."""
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
        """Whether the arrays fit together as one model's, laid out as the readers read them (their
        shapes, dtypes and order, not their values)."""
        weights, priors, languages, moves = self.weights, self.priors, self.languages, self.moves
        return (
            weights.ndim == 2
            and weights.dtype == np.float16
            and bool(weights.flags.c_contiguous)
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

    def identifier(self) -> Any:
        """py3langid's identifier (normalised probabilities) over these arrays, held in memory."""
        return _identifier(self.weights, self.priors, self.languages, self.moves, self.rows, self.features)


def _identifier(
    weights: Any, priors: Any, languages: np.ndarray, moves: Any, rows: Any, features: Any
) -> Any:
    """py3langid's identifier (normalised probabilities) over these tables, held or read from files."""
    from py3langid.langid import LanguageIdentifier  # type: ignore[import-untyped]

    return LanguageIdentifier(
        weights, priors, languages.tolist(), moves, features, norm_probs=True, tk_row=rows
    )


_NAMES = tuple(field.name for field in dataclasses.fields(LanguageTables))


class _StoredArray:
    """An array in a ``.npy`` file, read from it as asked; the file stays open while this is alive."""

    def __init__(self, descriptor: int, mapped: np.memmap) -> None:
        weakref.finalize(self, os.close, descriptor)
        self._descriptor, self._offset = descriptor, int(mapped.offset)
        self.dtype, self.shape = mapped.dtype, mapped.shape

    def _read(self, at: int, size: int) -> bytes:
        """``size`` bytes from ``at`` past the header; IndexError if the file was cut short since."""
        data = os.pread(self._descriptor, size, self._offset + at)
        if len(data) != size:
            raise IndexError(at)
        return data


class StoredEntries(_StoredArray):
    """A 1-D array in a ``.npy`` file, read one entry at a time (the automaton's walk takes one per byte)."""

    def __len__(self) -> int:
        return int(self.shape[0])

    def __getitem__(self, at: int) -> int:
        if not 0 <= at < self.shape[0]:
            raise IndexError(at)
        size = self.dtype.itemsize
        return int(np.frombuffer(self._read(at * size, size), dtype=self.dtype)[0])


class StoredRows(_StoredArray):
    """A 2-D array in a ``.npy`` file, read the rows asked for (a question's features' weights)."""

    def __getitem__(self, rows: np.ndarray) -> np.ndarray:
        row_bytes = self.dtype.itemsize * self.shape[1]
        read = np.empty((len(rows), self.shape[1]), dtype=self.dtype)
        for at, row in enumerate(np.asarray(rows).tolist()):
            if not 0 <= row < self.shape[0]:
                raise IndexError(row)
            read[at] = np.frombuffer(self._read(row * row_bytes, row_bytes), dtype=self.dtype)
        return read


def identifier_from_tables(cache_dir: Path | None) -> Any:
    """py3langid's identifier (normalised probabilities) over its tables kept in ``cache_dir``,
    unpacked there first if they are not; held in memory where none can be kept there.

    Its ``set_languages`` does not work over tables read from files (raglens never calls it).
    """
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    if cache_dir is None or not TABLES_WORK_HERE:
        return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    model_file = Path(MODEL_DIR) / MODEL_FILE
    try:
        folder = cache_dir / TABLES_FOLDER / _key(model_file)
        opened = open_identifier(folder)
        if opened is not None:
            return opened
        tables = unpack_tables(model_file)
    except Exception:  # a model file this release does not lay out so: the library's own load
        return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    if not tables.fit_together():
        return tables.identifier()  # not written: it would be unpacked and written at every start
    written = write_tables(folder, tables)
    opened = open_identifier(folder) if written else None
    return opened if opened is not None else tables.identifier()


def write_tables(folder: Path, tables: LanguageTables) -> bool:
    """Write ``tables`` in ``folder`` (each file whole, then renamed) and forget the tables of other
    releases' models beside it; False if they could not be written (a read-only or full disk)."""
    try:
        make_private_folder(folder)
        forget_stale_temporaries(folder)
        for name in _NAMES:
            save = functools.partial(_save_array, array=getattr(tables, name))
            write_privately(folder / f"{name}.npy", save)
    except OSError:
        return False
    with contextlib.suppress(OSError):
        for other in folder.parent.iterdir():
            if other != folder and other.is_dir():
                shutil.rmtree(other, ignore_errors=True)  # a process reading them keeps its open files
    return True


def open_identifier(folder: Path) -> Any | None:
    """py3langid's identifier over the tables written in ``folder``: the two large ones read from their
    files as asked, the rest held; None if any is absent, cut short or unfit."""
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
    opening = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
    try:
        weights = StoredRows(os.open(folder / "weights.npy", opening), weights_file)
        moves = StoredEntries(os.open(folder / "moves.npy", opening), moves_file)
    except OSError:
        return None
    return _identifier(
        weights,
        np.array(mapped.priors),
        np.array(mapped.languages),
        moves,
        np.array(mapped.rows),
        np.array(mapped.features),
    )


def unpack_tables(model_file: Path) -> LanguageTables:
    """py3langid's model file, unpacked by its own loader (which checks its layout) into arrays."""
    from py3langid.modelio import load_model  # type: ignore[import-untyped]

    weights, priors, languages, moves, rows, features = load_model(model_file)
    return LanguageTables(
        weights=np.ascontiguousarray(weights),
        priors=np.asarray(priors),
        languages=np.asarray(languages, dtype=str),
        moves=np.frombuffer(moves, dtype=f"u{moves.itemsize}"),
        rows=np.asarray(rows, dtype=np.int64),
        features=np.asarray(features, dtype=np.int32),
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
