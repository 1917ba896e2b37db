"""A persistent cache of window vectors: SQLite in WAL mode, keyed by model fingerprint and text hash.

Each stored batch is one transaction, so a process killed mid-index leaves every earlier batch
usable and nothing half-written; SQLite's locking lets two raglens processes share one file.
Vectors are raw little-endian float32 bytes; nothing is pickled. A file that SQLite cannot read is
moved aside and a new one started, with a warning: the cache never stops raglens. A cache that
cannot be written (a full disk, a read-only file or folder) is not broken: it is still read, and
new vectors stay in memory for the session.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from raglens.embedding_events import ModelChoice, ReadingExtent
from raglens.fingerprint import ModelFingerprint, file_identity, fingerprint_model, sha256_of_file

CACHE_FILE_NAME = "vectors.sqlite3"
SCHEMA_VERSION = 2
_LOOKUP_CHUNK = 500
"""Keys per SELECT: well under SQLite's limit on bound parameters."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS models (
    id INTEGER PRIMARY KEY,
    fingerprint TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    precision TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    max_seq_length INTEGER,
    folder TEXT NOT NULL,
    first_used REAL NOT NULL,
    last_used REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS vectors (
    model_id INTEGER NOT NULL REFERENCES models (id),
    text_hash BLOB NOT NULL,
    vector BLOB NOT NULL,
    token_count INTEGER NOT NULL,
    chars_read INTEGER NOT NULL,
    stored REAL NOT NULL,
    UNIQUE (model_id, text_hash)
);
CREATE TABLE IF NOT EXISTS control_vectors (
    fingerprint TEXT NOT NULL,
    text_hash BLOB NOT NULL,
    vector BLOB NOT NULL,
    stored REAL NOT NULL,
    UNIQUE (fingerprint, text_hash)
);
CREATE TABLE IF NOT EXISTS file_hashes (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL
);
"""


def text_key(text: str) -> bytes:
    """The cache key of a window's exact text: a 16-byte BLAKE2b digest of its UTF-8 bytes."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass(frozen=True)
class CachedVector:
    """One stored vector and how much of its text the model read."""

    vector: np.ndarray
    extent: ReadingExtent
    stored: float
    """When it was stored (seconds since the epoch)."""


@dataclass(frozen=True)
class ModelEntries:
    """One model configuration in the cache and how many vectors it has there."""

    fingerprint: str
    name: str
    precision: str
    dimension: int
    max_seq_length: int | None
    folder: str
    entries: int
    first_used: float
    last_used: float


@dataclass(frozen=True)
class CacheInfo:
    """Where the cache is, how big, and what it holds."""

    path: Path
    size_bytes: int
    models: tuple[ModelEntries, ...]

    @property
    def entries(self) -> int:
        return sum(model.entries for model in self.models)


UNIT_TOLERANCE = 1e-3
"""How far from 1 a stored vector's length may be; float32 unit rows are within 1e-6."""


def is_unit_vector(vector: np.ndarray) -> bool:
    """Whether ``vector`` is finite with unit length, as every vector raglens stores is."""
    if not np.isfinite(vector).all():
        return False
    return abs(float(np.linalg.norm(vector.astype(np.float64))) - 1.0) <= UNIT_TOLERANCE


_BUSY = {"SQLITE_BUSY", "SQLITE_LOCKED"}
_CANNOT_WRITE = {"SQLITE_FULL", "SQLITE_READONLY", "SQLITE_IOERR", "SQLITE_CANTOPEN", "SQLITE_PERM"}
"""Failures of the disk or of permissions, not of the file's content: the file is still good to read."""


def _failure_kind(error: sqlite3.Error) -> str:
    """The primary SQLite result code of ``error`` by name (``SQLITE_FULL``…), from its message on 3.10."""
    name = getattr(error, "sqlite_errorname", None)
    if isinstance(name, str):
        return "_".join(name.split("_")[:2])  # SQLITE_IOERR_WRITE is an SQLITE_IOERR
    message = str(error)
    for needle, kind in (
        ("locked", "SQLITE_LOCKED"),
        ("busy", "SQLITE_BUSY"),
        ("disk is full", "SQLITE_FULL"),
        ("readonly", "SQLITE_READONLY"),
        ("disk I/O error", "SQLITE_IOERR"),
        ("unable to open", "SQLITE_CANTOPEN"),
    ):
        if needle in message:
            return kind
    return "SQLITE_ERROR"


class VectorCache:
    """An open cache file; every method degrades to "nothing cached" instead of raising."""

    def __init__(self, path: Path, connection: sqlite3.Connection | None) -> None:
        self.path = path
        self._connection: sqlite3.Connection | None = connection
        self.writable = connection is not None
        """False once a write failed for want of space or permission: reads go on, writes stop."""
        self.unwritable_because: str | None = None if self.writable else "it could not be opened"
        """Why ``writable`` is False, in SQLite's words."""
        self.warnings: list[str] = []
        """What went wrong with the cache so far, for the user; empty when all is well."""

    @classmethod
    def open(cls, directory: Path) -> VectorCache:
        """Open (or create) the cache in ``directory``; an unreadable file is moved aside first."""
        path = directory / CACHE_FILE_NAME
        warnings: list[str] = []
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            cache = cls(path, None)
            cache.warnings.append(f"cannot create the cache folder {directory}: {error}; nothing is cached")
            return cache
        try:
            connection = _connect_when_free(path)
        except sqlite3.OperationalError as error:
            # Locked by another raglens, or not writable here: the file itself may be fine.
            if path.exists() and _failure_kind(error) in _CANNOT_WRITE:
                with contextlib.suppress(sqlite3.Error):
                    cache = cls(path, _connect_read_only(path))
                    cache._stop_writing("opening it", error)
                    return cache
            cache = cls(path, None)
            cache.warnings.append(f"cannot open the cache {path} ({error}); nothing is cached this time")
            return cache
        except sqlite3.DatabaseError as error:
            moved = _move_aside(path)
            warnings.append(
                f"the cache {path} could not be read ({error}); moved it to {moved} and started anew"
            )
            try:
                connection = _connect_when_free(path)
            except sqlite3.Error as second:
                cache = cls(path, None)
                cache.warnings.extend(
                    [*warnings, f"cannot open a new cache at {path}: {second}; nothing is cached"]
                )
                return cache
        cache = cls(path, connection)
        cache.warnings.extend(warnings)
        return cache

    @property
    def is_usable(self) -> bool:
        """False once the cache was given up on for this session."""
        return self._connection is not None

    def close(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(sqlite3.Error):
                # Fold the write-ahead log into the file, so it does not stay at its largest size.
                self._connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            with contextlib.suppress(sqlite3.Error):
                self._connection.close()
            self._connection = None

    def __enter__(self) -> VectorCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def lookup(self, fingerprint: str, dimension: int, keys: Sequence[bytes]) -> dict[bytes, CachedVector]:
        """The stored vectors of those ``keys`` that the cache has for ``fingerprint``."""
        found: dict[bytes, CachedVector] = {}
        damaged = 0
        with self._guard("reading"):
            connection = self._require()
            model_id = _model_id(connection, fingerprint)
            if model_id is None:
                return found
            columns = "text_hash, vector, token_count, chars_read, stored"
            for key, blob, token_count, chars_read, stored in _rows_of(
                connection, "vectors", columns, ("model_id", model_id), keys
            ):
                vector = np.frombuffer(blob, dtype="<f4").astype(np.float32) if len(blob) % 4 == 0 else None
                if vector is None or len(vector) != dimension or not is_unit_vector(vector):
                    # Damaged on disk: embedded again, and replaced when stored, rather than ranked
                    # first (or last) for every query.
                    damaged += 1
                    continue
                extent = ReadingExtent(token_count, chars_read)
                found[bytes(key)] = CachedVector(vector, extent, stored)
        if damaged:
            after = "replaced" if self.writable else "kept in memory only (the cache cannot be written)"
            self.warnings.append(
                f"{damaged:,} stored vector(s) in {self.path} were damaged (not {dimension} finite numbers "
                f"of unit length); they are embedded again and {after}"
            )
        return found

    def store(
        self,
        fingerprint: ModelFingerprint,
        dimension: int,
        keys: Sequence[bytes],
        vectors: np.ndarray,
        extents: Sequence[ReadingExtent],
    ) -> None:
        """Store one batch in one transaction; a key already stored is replaced (it was damaged, or
        another process stored the same vector). A row that is not a finite unit vector is not stored.
        """
        if vectors.shape != (len(keys), dimension) or len(extents) != len(keys):
            raise ValueError(f"{len(keys)} keys, vectors of shape {vectors.shape}, {len(extents)} extents")
        now = time.time()
        sound = [row for row, vector in enumerate(vectors) if is_unit_vector(vector)]
        if len(sound) < len(keys):
            self.warnings.append(
                f"{len(keys) - len(sound):,} vector(s) from {fingerprint.name} were not finite unit "
                "vectors; they were not stored"
            )
        blobs = [np.ascontiguousarray(vectors[row], dtype="<f4").tobytes() for row in sound]
        if not self.writable or not sound:
            return
        with self._guard("writing"):
            connection = self._require()
            with _transaction(connection):
                model_id = _model_row(connection, fingerprint, dimension, now)
                self._correct_dimension(connection, model_id, fingerprint.name, dimension)
                rows = [
                    (model_id, keys[row], blob, extents[row].token_count, extents[row].chars_read, now)
                    for row, blob in zip(sound, blobs, strict=True)
                ]
                connection.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?, ?, ?)", rows)

    def _correct_dimension(
        self, connection: sqlite3.Connection, model_id: int, name: str, width: int
    ) -> None:
        """Make the model row's dimension ``width``, the engine's, saying so if the row held another.

        A fingerprint names the model's exact files, so its vectors cannot change length: a row that
        says otherwise was damaged.
        """
        row = connection.execute("SELECT dimension FROM models WHERE id = ?", (model_id,)).fetchone()
        if row is not None and row[0] != width:
            connection.execute("UPDATE models SET dimension = ? WHERE id = ?", (width, model_id))
            self.warnings.append(_dimension_corrected(name, row[0], width))

    def lookup_queries(self, fingerprint: str, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """The stored query vectors of those ``keys`` that the cache has for ``fingerprint``.

        Filed by the fingerprint itself, not a model row's id: a row id can be reused after a clear.
        """
        found: dict[bytes, np.ndarray] = {}
        with self._guard("reading"):
            connection = self._require()
            owner = ("fingerprint", fingerprint)
            for key, blob in _rows_of(connection, "control_vectors", "text_hash, vector", owner, keys):
                vector = np.frombuffer(blob, dtype="<f4").astype(np.float32)
                if is_unit_vector(vector):
                    found[bytes(key)] = vector  # anything else is damaged: embedded again
        return found

    def store_queries(self, fingerprint: str, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Store query vectors in one transaction; a key already stored is replaced (a damaged row)."""
        if vectors.ndim != 2 or len(vectors) != len(keys):
            raise ValueError(f"{len(keys)} keys, query vectors of shape {vectors.shape}")
        if not self.writable:
            return
        now = time.time()
        blobs = [np.ascontiguousarray(vector, dtype="<f4").tobytes() for vector in vectors]
        with self._guard("writing"):
            connection = self._require()
            with _transaction(connection):
                connection.executemany(
                    "INSERT OR REPLACE INTO control_vectors VALUES (?, ?, ?, ?)",
                    [(fingerprint, key, blob, now) for key, blob in zip(keys, blobs, strict=True)],
                )

    def dimension_of(self, fingerprint: str) -> int | None:
        """The vector dimension stored for ``fingerprint``, or None if it has no vectors here.

        The model table's figure is checked against the length of a stored vector (one indexed read);
        where they differ, the length most of its vectors have wins, and the table is corrected.
        """
        with self._guard("reading"):
            connection = self._require()
            row = connection.execute(
                "SELECT id, name, dimension, "
                "(SELECT length(vector) FROM vectors v WHERE v.model_id = models.id LIMIT 1) "
                "FROM models WHERE fingerprint = ?",
                (fingerprint,),
            ).fetchone()
            if row is None:
                return None
            model_id, name, dimension, sample = row
            if sample is None or sample == 4 * dimension:
                return int(dimension)
            common = connection.execute(
                "SELECT length(vector) AS n FROM vectors WHERE model_id = ? GROUP BY n "
                "ORDER BY count(*) DESC LIMIT 1",
                (model_id,),
            ).fetchone()
            if common is None or common[0] == 4 * dimension or common[0] % 4:
                return int(dimension)
            width = int(common[0]) // 4
            self.warnings.append(_dimension_corrected(name, dimension, width))
            if self.writable:
                with self._guard("writing"), _transaction(connection):
                    connection.execute("UPDATE models SET dimension = ? WHERE id = ?", (width, model_id))
            return width
        return None

    def file_sha256(self, path: Path) -> str:
        """The sha256 of a large file, computed once per (path, size, mtime) and remembered."""
        identity = file_identity(path)
        with self._guard("reading"):
            row = (
                self._require()
                .execute(
                    "SELECT sha256 FROM file_hashes WHERE path = ? AND size = ? AND mtime_ns = ?", identity
                )
                .fetchone()
            )
            if row is not None:
                return str(row[0])
        digest = sha256_of_file(path)
        if not self.writable:
            return digest
        with self._guard("writing"):
            connection = self._require()
            with _transaction(connection):
                connection.execute(
                    "INSERT OR REPLACE INTO file_hashes VALUES (?, ?, ?, ?)", (*identity, digest)
                )
        return digest

    def info(self) -> CacheInfo:
        """What the cache holds, per model configuration."""
        models: list[ModelEntries] = []
        with self._guard("reading"):
            rows = self._require().execute(
                "SELECT m.fingerprint, m.name, m.precision, m.dimension, m.max_seq_length, m.folder, "
                "(SELECT count(*) FROM vectors v WHERE v.model_id = m.id), "
                "m.first_used, m.last_used FROM models m ORDER BY m.last_used DESC"
            )
            models = [ModelEntries(*row) for row in rows]
        size = sum(_size(self.path.with_name(self.path.name + suffix)) for suffix in ("", "-wal", "-shm"))
        return CacheInfo(self.path, size, tuple(models))

    def clear(self, model: str | None = None) -> int | None:
        """Delete every vector (or those of models named ``model`` or with that fingerprint); how many.

        None when nothing could be deleted; ``warnings`` says why.
        """
        removed: int | None = None
        if not self.writable:
            return None
        with self._guard("writing"):
            connection = self._require()
            with _transaction(connection):
                if model is None:
                    removed = connection.execute("DELETE FROM vectors").rowcount
                    connection.execute("DELETE FROM control_vectors")
                    connection.execute("DELETE FROM models")
                else:
                    selected = [
                        row[0]
                        for row in connection.execute(
                            "SELECT id FROM models WHERE name = ? OR fingerprint = ?", (model, model)
                        )
                    ]
                    connection.execute(
                        "DELETE FROM control_vectors WHERE fingerprint = ? OR fingerprint IN "
                        "(SELECT fingerprint FROM models WHERE name = ?)",
                        (model, model),
                    )
                    removed = 0
                    for model_id in selected:
                        removed += connection.execute(
                            "DELETE FROM vectors WHERE model_id = ?", (model_id,)
                        ).rowcount
                        connection.execute("DELETE FROM models WHERE id = ?", (model_id,))
            if model is None:
                connection.execute("VACUUM")
        return removed

    def _require(self) -> sqlite3.Connection:
        if self._connection is None:
            raise _CacheOff
        return self._connection

    @contextlib.contextmanager
    def _guard(self, doing: str) -> Iterator[None]:
        """Turn a cache failure into a warning: a busy file skips one step, a full disk or a read-only
        file stops writing (reads go on), and only a file SQLite cannot read is moved aside."""
        try:
            yield
        except _CacheOff:
            return
        except sqlite3.OperationalError as error:
            kind = _failure_kind(error)
            if kind in _BUSY:
                self.warnings.append(f"the cache was busy while {doing} ({error}); carried on without it")
            elif kind in _CANNOT_WRITE:
                self._stop_writing(doing, error)
            else:
                self._give_up(doing, error)
        except sqlite3.DatabaseError as error:
            self._give_up(doing, error)

    def _stop_writing(self, doing: str, error: sqlite3.Error) -> None:
        """Say once that the cache cannot take more; it stays open for reading."""
        if self.writable:
            self.writable = False
            self.unwritable_because = str(error)
            self.warnings.append(
                f"the cache {self.path} cannot be written ({error} while {doing}); it is still read, and "
                "what is embedded from now on stays in memory for this session"
            )

    def _give_up(self, doing: str, error: sqlite3.Error) -> None:
        self.close()
        moved = _move_aside(self.path)
        self._disable(
            f"the cache {self.path} failed while {doing} ({error}); moved it to {moved}; "
            "it will be rebuilt on the next start"
        )

    def _disable(self, warning: str) -> None:
        self.close()
        self.warnings.append(warning)


def _dimension_corrected(name: str, stated: int, width: int) -> str:
    """The warning that a models row said ``stated`` dimensions where the vectors have ``width``."""
    return (
        f"the cache's model table gave {name} {stated} dimensions where its vectors have {width}; corrected"
    )


class _CacheOff(Exception):
    """The cache was given up on earlier in this session."""


def _rows_of(
    connection: sqlite3.Connection,
    table: str,
    columns: str,
    owner: tuple[str, object],
    keys: Sequence[bytes],
) -> Iterator[tuple[Any, ...]]:
    """``columns`` of the rows of ``table`` (one of raglens's own) whose ``owner`` column has its value
    and whose text_hash is one of ``keys``, asked in chunks of _LOOKUP_CHUNK keys."""
    column, value = owner
    unique = list(dict.fromkeys(keys))
    for start in range(0, len(unique), _LOOKUP_CHUNK):
        chunk = unique[start : start + _LOOKUP_CHUNK]
        marks = ",".join("?" * len(chunk))
        yield from connection.execute(
            f"SELECT {columns} FROM {table} WHERE {column} = ? AND text_hash IN ({marks})", (value, *chunk)
        )


def _model_row(
    connection: sqlite3.Connection, fingerprint: ModelFingerprint, dimension: int, now: float
) -> int:
    """The id of ``fingerprint``'s row in ``models``, made or touched (``last_used``) now."""
    connection.execute(
        "INSERT INTO models (fingerprint, name, precision, dimension, max_seq_length, folder, "
        "first_used, last_used) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(fingerprint) DO UPDATE SET last_used = excluded.last_used",
        (
            fingerprint.digest,
            fingerprint.name,
            fingerprint.precision,
            dimension,
            fingerprint.max_seq_length,
            os.fspath(fingerprint.folder),
            now,
            now,
        ),
    )
    model_id = _model_id(connection, fingerprint.digest)
    assert model_id is not None  # inserted just now, in this transaction
    return model_id


def _model_id(connection: sqlite3.Connection, fingerprint: str) -> int | None:
    row = connection.execute("SELECT id FROM models WHERE fingerprint = ?", (fingerprint,)).fetchone()
    return int(row[0]) if row is not None else None


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """Open a cache this process may not write (a read-only file or folder) for reading only.

    In a read-only folder SQLite cannot make the shared-memory file WAL mode reads through, so the
    file is then opened as immutable: what was checkpointed into it, which a clean close ensures.
    """
    uri = f"file:{urllib.parse.quote(os.fspath(path))}?mode=ro"
    try:
        connection = _read_only_connection(uri)
    except sqlite3.OperationalError:
        connection = _read_only_connection(uri + "&immutable=1")
    try:
        row = connection.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None or row[0] != str(SCHEMA_VERSION):
            raise sqlite3.DatabaseError(
                f"schema version {row and row[0]}, this raglens reads {SCHEMA_VERSION}"
            )
    except BaseException:
        connection.close()
        raise
    return connection


def _read_only_connection(uri: str) -> sqlite3.Connection:
    connection = sqlite3.connect(
        uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
    )
    try:
        connection.execute("SELECT count(*) FROM models").fetchone()  # opening is lazy: read to know
    except BaseException:
        connection.close()
        raise
    return connection


BUSY_TIMEOUT_S = 10.0
"""How long a step waits for another raglens that holds the cache's write lock before it skips."""


def _connect_when_free(path: Path, wait_s: float | None = None) -> sqlite3.Connection:
    """Open the cache, trying again while another raglens holds it, for up to ``wait_s`` in all
    (None: BUSY_TIMEOUT_S).

    SQLite's busy wait does not cover every case: two processes creating the same new file at once
    can each hold a lock the other needs (one switching it to WAL, one reading it), and SQLite then
    answers "database is locked" at once rather than wait. Measured here: 65 of 300 runs of four
    processes opening one new cache together lost the race this way. A failed statement releases
    its lock, so opening again shortly after succeeds.
    """
    deadline = time.monotonic() + (BUSY_TIMEOUT_S if wait_s is None else wait_s)
    pause_s = 0.01
    while True:
        try:
            return _connect(path, busy_wait_s=max(0.0, deadline - time.monotonic()))
        except sqlite3.OperationalError as error:
            if _failure_kind(error) not in _BUSY or time.monotonic() + pause_s > deadline:
                raise
        time.sleep(pause_s)
        pause_s = min(pause_s * 2, 0.25)


def _connect(path: Path, busy_wait_s: float = BUSY_TIMEOUT_S) -> sqlite3.Connection:
    """Open the cache file, waiting up to ``busy_wait_s`` for another raglens's lock while it opens;
    every later step waits up to BUSY_TIMEOUT_S."""
    connection = sqlite3.connect(path, timeout=busy_wait_s, isolation_level=None, check_same_thread=False)
    try:
        # Large pages hold ten 1.5 KB vectors each instead of two; this only applies to a new file.
        connection.execute("PRAGMA page_size=16384")
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")  # in WAL mode: consistent after any crash
        connection.executescript(_SCHEMA)
        row = connection.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            connection.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        elif row[0] != str(SCHEMA_VERSION):
            raise sqlite3.DatabaseError(f"schema version {row[0]}, this raglens writes {SCHEMA_VERSION}")
        connection.execute("SELECT count(*) FROM models").fetchone()
        connection.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
    except BaseException:
        connection.close()
        raise
    return connection


@contextlib.contextmanager
def _transaction(connection: sqlite3.Connection) -> Iterator[None]:
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        # SQLite has already rolled back after some errors (a full disk): a second ROLLBACK would fail
        # with "no transaction is active" and hide the real error behind one that looks like damage.
        if connection.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _move_aside(path: Path) -> Path:
    """Rename the cache file (and its WAL and shared-memory files) out of the way; the new name."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    target = path.with_name(f"{path.name}.broken-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        source = path.with_name(path.name + suffix)
        with contextlib.suppress(OSError):
            source.replace(target.with_name(target.name + suffix))
    return target


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def query_key(engine: str, query: str) -> bytes:
    """The cache key of a query as one engine embeds it: the same question through the fp32 export
    and through torch at bf16 gives two vectors, and a band must be made of one engine's."""
    return text_key(f"{engine}\0{query}")


def keys_of(texts: Iterable[str]) -> list[bytes]:
    """The cache key of each text."""
    return [text_key(text) for text in texts]


@dataclass(frozen=True)
class ModelCache:
    """The cache as one model configuration sees it: look up and store window texts directly."""

    cache: VectorCache
    fingerprint: ModelFingerprint
    dimension: int | None
    """The model's vector length; None when nothing was stored yet (then the cache is asked again)."""

    @classmethod
    def of(cls, cache: VectorCache, fingerprint: ModelFingerprint) -> ModelCache:
        """The cache for ``fingerprint``, with the dimension of its stored vectors (no model needed)."""
        return cls(cache, fingerprint, cache.dimension_of(fingerprint.digest))

    @classmethod
    def for_model(cls, cache: VectorCache, choice: ModelChoice) -> ModelCache | None:
        """The cache of the model ``choice`` names, as it runs (precision, token limit, factory);
        None when the model's files are not on this machine to identify it."""
        fingerprint = fingerprint_model(
            choice.model,
            choice.precision,
            factory=choice.factory,
            hash_large_file=cache.file_sha256,
            max_seq_length=choice.max_seq_length,
        )
        return cls.of(cache, fingerprint) if fingerprint is not None else None

    def lookup(self, texts: Sequence[str], keys: Sequence[bytes] | None = None) -> list[CachedVector | None]:
        """The cached vector of each text, or None where there is none; ``keys``: the texts' cache keys,
        where they were made already (:func:`keys_of`)."""
        dimension = self.dimension
        if dimension is None:  # nothing was stored when this was made; another batch may have been since
            dimension = self.cache.dimension_of(self.fingerprint.digest)
        if dimension is None:
            return [None] * len(texts)
        if keys is None:
            keys = keys_of(texts)
        elif len(keys) != len(texts):
            raise ValueError(f"{len(keys)} keys for {len(texts)} texts")
        found = self.cache.lookup(self.fingerprint.digest, dimension, keys)
        return [found.get(key) for key in keys]

    def lookup_queries(self, queries: Sequence[str], engine: str) -> list[np.ndarray | None]:
        """The cached vector of each query as ``engine`` embeds it (see :func:`query_key`), or None."""
        keys = [query_key(engine, query) for query in queries]
        found = self.cache.lookup_queries(self.fingerprint.digest, keys)
        return [found.get(key) for key in keys]

    def store_queries(self, queries: Sequence[str], engine: str, vectors: np.ndarray) -> None:
        """Remember the vectors ``engine`` gave ``queries`` (one transaction)."""
        keys = [query_key(engine, query) for query in queries]
        self.cache.store_queries(self.fingerprint.digest, keys, vectors)

    def query_vectors(
        self, queries: Sequence[str], engine: str, embed_query: Callable[[str], np.ndarray]
    ) -> list[np.ndarray]:
        """Each query's vector: from the cache, else embedded with ``embed_query`` and stored.

        The control questions of the noise band are asked on every start and every ``search``; 32 of
        them took ~0.2 s of the embedding engine each time.
        """
        found = self.lookup_queries(queries, engine)
        missing = list(dict.fromkeys(q for q, vector in zip(queries, found, strict=True) if vector is None))
        fresh = {query: embed_query(query) for query in missing}
        if fresh:
            self.store_queries(list(fresh), engine, np.stack(list(fresh.values())))
        return [vector if vector is not None else fresh[q] for q, vector in zip(queries, found, strict=True)]

    def store(self, texts: Sequence[str], vectors: np.ndarray, extents: Sequence[ReadingExtent]) -> None:
        """Remember the vectors of ``texts`` (one transaction), at the engine's own dimension."""
        self.cache.store(self.fingerprint, int(vectors.shape[1]), keys_of(texts), vectors, extents)
