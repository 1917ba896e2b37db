"""What each file of a corpus read to, kept in the cache folder so that a relaunch reads only what changed.

Reading and checking 10k files took 1.2-1.7 s of every launch at 100k windows, most of it spent on
files that had not changed. A regular file whose ``lstat`` signature (size, modification and change
times, inode, device) is the one it had when it was read is taken to read the same, as git takes its
index: the change time is set by the system at every write and no tool can set it back, so a file
written since has another signature. A file changed within the clock tick in which it was looked at
could keep its signature ("racily clean", in git's words): a file changed less than
:data:`RACY_NS` before the scan began is read every time and never kept.

The memo holds a copy of each kept file's text; ``raglens cache clear`` removes it with the rest.
Anything wrong with a memo file (absent, cut short, another format, a failed checksum) only means
every file is read; failing to write one only means the next launch reads every file again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from raglens.corpus import (
    READ_FORMAT,
    Corpus,
    CorpusOptions,
    SkippedFile,
    SkipReason,
    SourceFile,
    scan_corpus,
)
from raglens.held_text import utf8_of
from raglens.private_files import forget_stale_temporaries, make_private_folder, write_privately

MEMO_WORKS_HERE = os.name != "nt"
"""Windows's ``st_ctime`` is the creation time, which a write leaves: a same-size rewrite with its
modification time set back would keep its signature. No memo there."""
MEMO_FOLDER = "readings"
"""The folder of the cache folder that holds one memo per corpus root and reading options."""
MEMO_SUFFIX = ".memo"
FORMAT = 1
_MAGIC = b"RAGLENS-READINGS"
RACY_NS = 2_000_000_000
"""How recent a change keeps a file out of the memo: clock ticks and coarse file systems stamp times
in steps of up to a second or two (FAT: 2 s)."""
KEPT_MEMOS = 8
"""Memos kept in the cache folder, the most recently written; older ones are deleted."""

CONTENT_REASONS = frozenset({SkipReason.TOO_LARGE, SkipReason.BINARY, SkipReason.EMPTY, SkipReason.GENERATED})
"""Skip reasons that a regular file's size and bytes decide, so its signature decides them too. The
others (symlink, not a file, unreadable, vanished) are looked at afresh every time, cheaply."""


@dataclass(frozen=True)
class FileSignature:
    """What ``lstat`` says of a regular file that any write to it changes."""

    size: int
    modified_ns: int
    changed_ns: int
    inode: int
    device: int

    @classmethod
    def of(cls, status: os.stat_result) -> FileSignature:
        """The signature in ``status``."""
        return cls(status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino, status.st_dev)

    def numbers(self) -> tuple[int, int, int, int, int]:
        """Its fields in order, as ``dataclasses.astuple`` gives them without its deep copy: a scan of
        10k files asks for every file's, and astuple took ~0.1 s of it."""
        return (self.size, self.modified_ns, self.changed_ns, self.inode, self.device)


Reading = SourceFile | SkippedFile
"""What one file read to: its text, or why it is left out."""


class ReadingMemo:
    """Each file's signature and what it read to; recalled by a scan while the signature holds."""

    def __init__(self, recalled: dict[str, tuple[FileSignature, Reading]], settled_before_ns: int) -> None:
        """``settled_before_ns``: files changed at or after this wall-clock time are not kept."""
        self._recalled = recalled
        self._settled_before_ns = settled_before_ns
        self.kept: dict[str, tuple[FileSignature, Reading]] = {}
        """What this scan found still true or read afresh and may keep: what the next memo holds."""
        self.read_afresh = 0
        """Files read this scan that the memo could not answer for."""
        self._kept_afresh = 0

    def recall(self, rel_path: str, status: os.stat_result) -> Reading | None:
        """What ``rel_path`` read to when its ``lstat`` said ``status``; None when it says otherwise now,
        or the file was not kept."""
        entry = self._recalled.get(rel_path)
        signature = FileSignature.of(status)
        if entry is None or entry[0] != signature:
            return None
        self.kept[rel_path] = entry
        return entry[1]

    def remember(
        self, rel_path: str, before: os.stat_result, reading: Reading, after: os.stat_result | None
    ) -> None:
        """``rel_path``, whose ``lstat`` said ``before`` its reading and ``after`` it (None: it could
        not be asked), was read to ``reading``; kept unless it changed while read or too recently.

        Only the change time counts as recent: the system sets it at every write, where a
        modification time in the future (an archive made on a fast clock) would keep a file out for good.
        """
        self.read_afresh += 1
        signature = FileSignature.of(before)
        if isinstance(reading, SkippedFile) and reading.reason not in CONTENT_REASONS:
            return
        if after is None or FileSignature.of(after) != signature:
            return  # written while it was read: the text may be newer than the signature
        if signature.changed_ns >= self._settled_before_ns:
            return
        self.kept[rel_path] = (signature, reading)
        self._kept_afresh += 1

    @property
    def changed(self) -> bool:
        """Whether the memo to write differs from the one read: a file kept afresh, or one gone."""
        return self._kept_afresh > 0 or self.kept.keys() != self._recalled.keys()


def memo_path(cache_dir: Path, root: Path, options: CorpusOptions) -> Path:
    """The memo of corpus ``root`` read with ``options`` (a file size limit keeps other files)."""
    named = f"{FORMAT}\0{READ_FORMAT}\0{root}\0{options.max_file_bytes}".encode("utf-8", "surrogatepass")
    return cache_dir / MEMO_FOLDER / (hashlib.sha256(named).hexdigest()[:32] + MEMO_SUFFIX)


def load_memo(path: Path, root: Path, now_ns: Callable[[], int] = time.time_ns) -> ReadingMemo:
    """The memo at ``path`` for ``root``; an empty one where there is none or it cannot be trusted.

    Made before the scan it serves, so its racy cut-off (``now_ns()`` less :data:`RACY_NS`) precedes
    every ``lstat`` of that scan.
    """
    settled_before = now_ns() - RACY_NS
    try:
        data = path.read_bytes()
        recalled = _decode(data, root)
    except Exception:  # absent, cut short, damaged, another format: every file is read
        recalled = {}
    return ReadingMemo(recalled, settled_before)


def save_memo(path: Path, root: Path, memo: ReadingMemo) -> bool:
    """Write what ``memo`` kept to ``path`` (whole, then renamed over the old one); False when it could
    not be written (a full disk, a read-only cache): nothing is lost but the next launch's time."""
    chunks = _encode(root, memo.kept)
    try:
        make_private_folder(path.parent)
        write_privately(path, lambda handle: handle.writelines(chunks))
    except OSError:
        return False
    _forget_old_memos(path.parent)
    return True


def corpus_identity(corpus: Corpus, memo: ReadingMemo) -> str | None:
    """A name for ``corpus``'s files as they are on disk: their paths and ``lstat`` signatures, which
    the memo holds for every file read to the text it had when read. None when a file changed too
    recently to be kept (its signature may not tell a later change), so that nothing is named by it."""
    digest = hashlib.sha256(f"{FORMAT}\0{READ_FORMAT}\0{corpus.root}\0".encode("utf-8", "surrogatepass"))
    for source in corpus.files:
        entry = memo.kept.get(source.path)
        if entry is None or entry[1] != source:
            return None
        stamp = repr(entry[0].numbers()).encode()
        digest.update(source.path.encode("utf-8", "surrogatepass") + b"\0" + stamp)
    return digest.hexdigest()


@dataclass(frozen=True)
class MemoToSave:
    """A memo that changed in a scan, to be written when the caller can spare the time."""

    path: Path
    root: Path
    memo: ReadingMemo

    def save(self) -> bool:
        """Write it; False when it could not be (see :func:`save_memo`)."""
        return save_memo(self.path, self.root, self.memo)


@dataclass(frozen=True)
class RememberedScan:
    """A corpus read with the help of the memo (named by its :func:`corpus_identity`, where it can be),
    and what to write of the memo."""

    corpus: Corpus
    memo_to_save: MemoToSave | None
    """None when the memo did not change (or there is no cache)."""


def scan_remembering(
    path: str | os.PathLike[str], options: CorpusOptions, cache_dir: Path | None
) -> RememberedScan:
    """:func:`scan_corpus`, reading only the files the memo in ``cache_dir`` cannot answer for (None:
    every file, no memo), with the memo to write when anything changed (the explorer writes it once
    the cache's vectors are in: a quit before then leaves the next launch to read the files again)."""
    root = _root_of(Path(path))
    if cache_dir is None or root is None or not MEMO_WORKS_HERE:
        return RememberedScan(scan_corpus(path, options), None)
    where = memo_path(cache_dir, root, options)
    memo = load_memo(where, root)
    corpus = scan_corpus(path, options, memo)
    if corpus.root != root or corpus.listing == "file":  # (replaced by a file meanwhile)
        return RememberedScan(corpus, None)
    if not memo.changed:
        with contextlib.suppress(OSError):
            os.utime(where)  # in use: the last to be forgotten
    to_save = MemoToSave(where, root, memo) if memo.changed else None
    return RememberedScan(replace(corpus, identity=corpus_identity(corpus, memo)), to_save)


def _root_of(given: Path) -> Path | None:
    """The folder a scan of ``given`` reads; None for a single file (a memo of one file would stand
    in for its folder's, and reading one file costs nothing worth keeping)."""
    try:
        resolved = given.expanduser().resolve()
    except (OSError, RuntimeError):
        return None
    return resolved if resolved.is_dir() else None


def _encode(root: Path, kept: dict[str, tuple[FileSignature, Reading]]) -> list[bytes]:
    """The memo file: magic, header length, a JSON header of the entries, then every text in UTF-8."""
    entries: list[list[object]] = []
    texts: list[bytes] = []
    for rel_path, (signature, reading) in kept.items():
        stamp = signature.numbers()
        if isinstance(reading, SourceFile):
            text = utf8_of(reading.held)
            texts.append(text)
            described = [reading.encoding, reading.decoding_note, reading.size_bytes, len(text)]
            entries.append([rel_path, *stamp, "file", *described])
        else:
            entries.append([rel_path, *stamp, "skipped", reading.reason.value, reading.detail])
    checksum = 0
    for text in texts:
        checksum = zlib.crc32(text, checksum)
    header = json.dumps({"format": FORMAT, "root": str(root), "crc32": checksum, "entries": entries})
    encoded = header.encode("utf-8", "surrogatepass")
    return [_MAGIC, len(encoded).to_bytes(8, "little"), encoded, *texts]


def _decode(data: bytes, root: Path) -> dict[str, tuple[FileSignature, Reading]]:
    """The entries of a memo file; ValueError (or another lookup error) when it is not one for ``root``."""
    if not data.startswith(_MAGIC):
        raise ValueError("not a memo")
    start = len(_MAGIC) + 8
    length = int.from_bytes(data[len(_MAGIC) : start], "little")
    header = json.loads(data[start : start + length].decode("utf-8", "surrogatepass"))
    if header["format"] != FORMAT or header["root"] != str(root):
        raise ValueError("another memo")
    texts = memoryview(data)[start + length :]
    if zlib.crc32(texts) != header["crc32"]:
        raise ValueError("checksum failed")
    recalled: dict[str, tuple[FileSignature, Reading]] = {}
    at = 0
    for entry in header["entries"]:
        rel_path, kind = entry[0], entry[6]
        signature = FileSignature(*(int(number) for number in entry[1:6]))
        reading: Reading
        if kind == "file":
            encoding, note, size_bytes, length_bytes = entry[7:11]
            text = texts[at : at + length_bytes]
            at += length_bytes
            reading = SourceFile.from_utf8(rel_path, text, encoding, size_bytes, note, signature.modified_ns)
        elif kind == "skipped":
            reading = SkippedFile(rel_path, SkipReason(entry[7]), entry[8])
        else:
            raise ValueError(f"unknown entry kind {kind!r}")
        recalled[rel_path] = (signature, reading)
    if at != len(texts):
        raise ValueError("texts of another length")
    return recalled


def _forget_old_memos(folder: Path) -> None:
    """Delete all but the :data:`KEPT_MEMOS` most recently written memos (and stray temporary files)."""
    try:
        memos = sorted(folder.glob("*" + MEMO_SUFFIX), key=lambda memo: memo.stat().st_mtime_ns, reverse=True)
        for stale in memos[KEPT_MEMOS:]:
            stale.unlink(missing_ok=True)
    except OSError:
        pass
    forget_stale_temporaries(folder)


def memo_files(cache_dir: Path) -> list[tuple[Path, int]]:
    """The memos in the cache folder ``cache_dir`` and their sizes in bytes, largest first."""
    try:
        found = [(path, path.stat().st_size) for path in (cache_dir / MEMO_FOLDER).glob("*" + MEMO_SUFFIX)]
    except OSError:
        return []
    return sorted(found, key=lambda entry: -entry[1])
