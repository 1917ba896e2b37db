"""The memo of files as last read: a scan that recalls it reads to exactly what a fresh scan reads."""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raglens import corpus_memo
from raglens.corpus import CorpusOptions, SkipReason, scan_corpus
from raglens.corpus_memo import (
    KEPT_MEMOS,
    MEMO_FOLDER,
    load_memo,
    memo_files,
    memo_path,
    scan_remembering,
)

LATER_NS = 3_600_000_000_000
"""An hour: a clock this far ahead sees every file of a test as long settled, never racy."""


def _settled_clock() -> int:
    return time.time_ns() + LATER_NS


def _tree(root: Path) -> None:
    """A corpus with a file of each kind a scan tells apart."""
    (root / "docs").mkdir(parents=True)
    (root / "a.py").write_text("def drain_pending_jobs():\n    return 1\n")
    (root / "docs" / "guide.md").write_text("# Guide\n\nStart a worker.\n" * 20)
    (root / "latin.txt").write_bytes("caf\xe9 cr\xe8me\n".encode("cp1252"))
    (root / "utf16.txt").write_bytes("hello wide\n".encode("utf-16"))
    (root / "blob.bin").write_bytes(b"\0\1\2" * 10)
    (root / "empty.txt").write_text("  \n")
    (root / "big.txt").write_text("x " * 600)
    (root / "yarn.lock").write_text("lock\n")
    (root / "link.py").symlink_to(root / "a.py")


def _scan_twice(root: Path, cache: Path, options: CorpusOptions) -> tuple[corpus_memo.ReadingMemo, object]:
    """Scan with a memo (saved with a settled clock), then again with the memo read back from disk."""
    first = load_memo(memo_path(cache, root, options), root, _settled_clock)
    scan_corpus(root, options, first)
    assert corpus_memo.save_memo(memo_path(cache, root, options), root, first)
    second = load_memo(memo_path(cache, root, options), root, _settled_clock)
    return second, scan_corpus(root, options, second)


def test_a_recalled_scan_equals_a_fresh_one_and_reads_nothing(tmp_path: Path) -> None:
    root, cache = tmp_path / "corpus", tmp_path / "cache"
    _tree(root)
    (root / "docs" / "dash.md").write_text("A \u2014 B \U0001f600\n" * 20)  # held as UTF-8 (held_text)
    options = CorpusOptions(max_file_bytes=1000)
    memo, recalled = _scan_twice(root, cache, options)
    fresh = scan_corpus(root, options)
    assert recalled == fresh
    assert recalled.files == fresh.files and recalled.skipped == fresh.skipped  # type: ignore[attr-defined]
    assert isinstance(recalled.file("docs/dash.md").held, bytes)  # type: ignore[attr-defined]
    assert memo.read_afresh == 0, "every regular file was answered for by the memo"
    assert not memo.changed
    kept = set(memo.kept)
    assert "link.py" not in kept, "a symlink is looked at afresh every time"
    assert {"a.py", "latin.txt", "utf16.txt", "blob.bin", "empty.txt", "big.txt"} <= kept
    reasons = {skipped.path: skipped.reason for skipped in fresh.skipped}
    assert reasons["big.txt"] is SkipReason.TOO_LARGE and reasons["blob.bin"] is SkipReason.BINARY


def _rewrite_keeping_size_and_mtime(path: Path, text: str) -> None:
    """Write ``text`` (as long as the old) and set the old modification time back, as an editor's
    careful save or a ``touch -r`` could: only the change time tells."""
    before = os.lstat(path)
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    while os.lstat(path).st_ctime_ns == before.st_ctime_ns:  # same clock tick: write again until it moves
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_file_written_since_is_read_again_even_with_its_old_size_and_mtime(tmp_path: Path) -> None:
    root, cache = tmp_path / "corpus", tmp_path / "cache"
    _tree(root)
    options = CorpusOptions()
    _scan_twice(root, cache, options)
    _rewrite_keeping_size_and_mtime(root / "a.py", "def drain_pending_JOBS():\n    return 2\n")
    memo = load_memo(memo_path(cache, root, options), root, _settled_clock)
    recalled = scan_corpus(root, options, memo)
    assert recalled.file("a.py").text == "def drain_pending_JOBS():\n    return 2\n"
    assert recalled == scan_corpus(root, options)
    assert memo.read_afresh == 1 and memo.changed


def test_removed_and_added_files_change_the_memo(tmp_path: Path) -> None:
    root, cache = tmp_path / "corpus", tmp_path / "cache"
    _tree(root)
    options = CorpusOptions()
    _scan_twice(root, cache, options)
    (root / "a.py").unlink()
    (root / "new.py").write_text("print('new')\n")
    memo = load_memo(memo_path(cache, root, options), root, _settled_clock)
    recalled = scan_corpus(root, options, memo)
    assert recalled == scan_corpus(root, options)
    assert "a.py" not in memo.kept and "new.py" in memo.kept and memo.changed


def test_a_file_changed_within_the_racy_margin_is_never_kept(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    _tree(root)
    changed = os.lstat(root / "a.py").st_ctime_ns
    # The scan begins in the same instant as the last write: a later write could keep its signature.
    memo = load_memo(tmp_path / "none.memo", root, lambda: changed + corpus_memo.RACY_NS)
    scan_corpus(root, CorpusOptions(), memo)
    assert "a.py" not in memo.kept
    memo = load_memo(tmp_path / "none.memo", root, lambda: changed + corpus_memo.RACY_NS + 1)
    scan_corpus(root, CorpusOptions(), memo)
    assert "a.py" in memo.kept, "a moment later it has settled"


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "other root"])
def test_a_damaged_or_foreign_memo_is_ignored(tmp_path: Path, damage: str) -> None:
    root, cache = tmp_path / "corpus", tmp_path / "cache"
    _tree(root)
    options = CorpusOptions()
    _scan_twice(root, cache, options)
    path = memo_path(cache, root, options)
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[: len(data) - 7]
    elif damage == "flip":
        data[-3] ^= 0x20  # one letter of a text: the checksum fails
    elif damage == "garbage":
        data = bytearray(b"\xff" * 40)
    path.write_bytes(bytes(data))
    named_root = tmp_path / "elsewhere" if damage == "other root" else root
    memo = load_memo(path, named_root, _settled_clock)
    assert memo.kept == {} and memo.read_afresh == 0
    recalled = scan_corpus(root, options, load_memo(path, named_root, _settled_clock))
    assert recalled == scan_corpus(root, options)


def test_a_memo_that_cannot_be_written_loses_nothing_but_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(corpus_memo, "RACY_NS", -LATER_NS)  # every file counts as settled
    root = tmp_path / "corpus"
    _tree(root)
    blocked = tmp_path / "a file"
    blocked.write_text("not a folder")
    scan = scan_remembering(root, CorpusOptions(), blocked)
    corpus, changed = scan.corpus, scan.memo_to_save
    assert corpus == scan_corpus(root, CorpusOptions())
    assert changed is not None and changed.save() is False
    assert blocked.read_text() == "not a folder"


def test_options_and_roots_have_memos_of_their_own(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    one, two = tmp_path / "one", tmp_path / "two"
    assert memo_path(cache, one, CorpusOptions()) != memo_path(cache, two, CorpusOptions())
    assert memo_path(cache, one, CorpusOptions()) != memo_path(cache, one, CorpusOptions(max_file_bytes=5))


def test_only_the_most_recent_memos_are_kept(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    roots = []
    for number in range(KEPT_MEMOS + 2):
        root = tmp_path / f"corpus{number}"
        root.mkdir()
        (root / "a.txt").write_text(f"text {number}\n")
        roots.append(root)
        memo = load_memo(memo_path(cache, root, CorpusOptions()), root, _settled_clock)
        scan_corpus(root, CorpusOptions(), memo)
        assert corpus_memo.save_memo(memo_path(cache, root, CorpusOptions()), root, memo)
        os.utime(memo_path(cache, root, CorpusOptions()), ns=(number * 10**9, number * 10**9))
    kept = {path for path, _ in memo_files(cache)}
    assert len(kept) == KEPT_MEMOS
    assert memo_path(cache, roots[0], CorpusOptions()) not in kept, "the oldest went"
    assert memo_path(cache, roots[-1], CorpusOptions()) in kept
    assert all(path.parent.name == MEMO_FOLDER for path in kept)


def test_scan_remembering_saves_only_when_something_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(corpus_memo, "RACY_NS", -LATER_NS)  # every file counts as settled
    root, cache = tmp_path / "corpus", tmp_path / "cache"
    _tree(root)
    first = scan_remembering(root, CorpusOptions(), cache)
    assert first.memo_to_save is not None and first.memo_to_save.save()
    again = scan_remembering(root, CorpusOptions(), cache)
    assert again.memo_to_save is None and again.corpus == first.corpus
    assert again.corpus.identity == first.corpus.identity is not None, "unchanged files, the same name"
    one_file = scan_remembering(root / "a.py", CorpusOptions(), cache).corpus
    assert [source.path for source in one_file.files] == ["a.py"]


def test_the_identity_names_every_file_as_read_or_nothing(tmp_path: Path) -> None:
    root, cache = tmp_path / "corpus", tmp_path / "cache"
    _tree(root)
    memo, corpus = _scan_twice(root, cache, CorpusOptions())
    identity = corpus_memo.corpus_identity(corpus, memo)  # type: ignore[arg-type]
    assert identity is not None
    _rewrite_keeping_size_and_mtime(root / "a.py", "def drain_pending_JOBS():\n    return 2\n")
    memo = load_memo(memo_path(cache, root, CorpusOptions()), root, _settled_clock)
    changed = scan_corpus(root, CorpusOptions(), memo)
    assert corpus_memo.corpus_identity(changed, memo) not in (None, identity), "a file written since"
    # A file read afresh now that changed just now (by this clock) is not named: nor is its corpus.
    _rewrite_keeping_size_and_mtime(root / "a.py", "def drain_pending_jobs():\n    return 3\n")
    racy = load_memo(memo_path(cache, root, CorpusOptions()), root, lambda: 0)
    assert corpus_memo.corpus_identity(scan_corpus(root, CorpusOptions(), racy), racy) is None
    assert "a.py" not in racy.kept and "docs/guide.md" in racy.kept, "what is recalled was settled then"


def test_files_written_just_before_the_scan_name_no_corpus_and_keep_no_memo(tmp_path: Path) -> None:
    """The real clock: the tree is written now, so every file is racily clean for the next 2 s."""
    root, cache = tmp_path / "corpus", tmp_path / "cache"
    _tree(root)
    scan = scan_remembering(root, CorpusOptions(), cache)
    assert scan.corpus.identity is None and scan.memo_to_save is None
    assert scan.corpus == scan_corpus(root, CorpusOptions())


def test_a_file_written_while_it_is_read_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from raglens import corpus

    root = tmp_path / "corpus"
    _tree(root)
    real_read = corpus._read_regular

    def read_then_write(full: Path, rel_path: str, *rest: object) -> object:
        reading = real_read(full, rel_path, *rest)  # type: ignore[arg-type]
        if rel_path == "a.py":
            full.write_text("written after the read, before the second look\n")
        return reading

    monkeypatch.setattr(corpus, "_read_regular", read_then_write)
    memo = load_memo(tmp_path / "none.memo", root, _settled_clock)
    scan_corpus(root, CorpusOptions(), memo)
    assert "a.py" not in memo.kept and "docs/guide.md" in memo.kept


def test_a_future_modification_time_does_not_keep_a_file_out(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    _tree(root)
    os.utime(root / "a.py", ns=(0, time.time_ns() + LATER_NS))  # an archive made on a fast clock
    memo = load_memo(tmp_path / "none.memo", root, lambda: time.time_ns() + 10 * corpus_memo.RACY_NS)
    scan_corpus(root, CorpusOptions(), memo)
    assert "a.py" in memo.kept, "only the change time, which the system sets, says a file is recent"


def _memo_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, dangling: bool = False
) -> tuple[Path, Path]:
    """The test tree (with a dangling symlink if asked), scanned and its memo saved, every file counting
    as settled; the corpus folder and the cache folder."""
    monkeypatch.setattr(corpus_memo, "RACY_NS", -LATER_NS)
    root, cache = tmp_path / "corpus", tmp_path / "cache"
    _tree(root)
    if dangling:
        (root / "gone.md").symlink_to(root / "nowhere.md")  # looked at afresh every time, never kept
    first = scan_remembering(root, CorpusOptions(), cache)
    assert first.memo_to_save is not None and first.memo_to_save.save()
    return root, cache


def test_a_single_file_has_no_memo_and_leaves_its_folders_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, cache = _memo_saved(tmp_path, monkeypatch)
    one = scan_remembering(root / "a.py", CorpusOptions(), cache)
    assert one.memo_to_save is None and one.corpus.identity is None
    assert scan_remembering(root, CorpusOptions(), cache).memo_to_save is None, "the folder's memo stands"
    memo = memo_path(cache, root.resolve(), CorpusOptions())
    assert memo.stat().st_mode & 0o777 == 0o600, "a copy of the texts only their owner reads"
    assert memo.parent.stat().st_mode & 0o777 == 0o700


def test_a_file_read_but_not_kept_does_not_rewrite_the_memo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, cache = _memo_saved(tmp_path, monkeypatch, dangling=True)
    assert scan_remembering(root, CorpusOptions(), cache).memo_to_save is None


READING_PIN = "ebd7c93c06f223c8"


def test_what_files_read_to_is_the_reading_memos_were_made_with(tmp_path: Path) -> None:
    """Files are recalled from the memo instead of read: a change to what a file reads to (decoding,
    the skip rules) must raise ``corpus.READ_FORMAT``, and then this pin, or old memos lend old texts."""
    from raglens.corpus import READ_FORMAT

    root = tmp_path / "corpus"
    _tree(root)
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\rthree\n")
    (root / "bundle.js").write_text("x" * 20_000 + "\n")
    (root / "data.csv").write_text("1,2,3,4,5,6,7,8,9\n" * 200)
    (root / "bom.md").write_bytes("\ufeff# Title\n".encode())
    (root / "bad.txt").write_bytes(b"ok \xff\xfe bytes\n")
    corpus = scan_corpus(root, CorpusOptions(max_file_bytes=1000))
    readings = [(f.path, f.text, f.encoding, f.size_bytes, f.decoding_note) for f in corpus.files]
    readings += [(s.path, s.reason.value, s.detail) for s in corpus.skipped]  # type: ignore[misc]
    pin = hashlib.sha256(repr(readings).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    assert (READ_FORMAT, pin) == (1, READING_PIN), (
        "what files read to changed: raise READ_FORMAT, then this pin"
    )


FILE_CONTENTS = st.one_of(
    st.text(min_size=0, max_size=300),
    st.binary(min_size=0, max_size=300),
    st.text(alphabet="ab \n\r\t\x00é€😀\udcff", max_size=200).map(
        lambda text: text.encode("utf-8", "surrogatepass")
    ),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(FILE_CONTENTS, min_size=1, max_size=6))
def test_any_files_read_back_from_a_memo_as_read_fresh(contents: list[str | bytes]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root, cache = Path(folder) / "corpus", Path(folder) / "cache"
        root.mkdir()
        for number, content in enumerate(contents):
            path = root / f"f{number}.txt"
            if isinstance(content, str):
                path.write_text(content, encoding="utf-8", errors="surrogatepass")
            else:
                path.write_bytes(content)
        options = CorpusOptions(max_file_bytes=250)
        memo, recalled = _scan_twice(root, cache, options)
        assert recalled == scan_corpus(root, options)
        assert memo.read_afresh == 0


def test_a_signature_s_numbers_are_its_fields_in_order() -> None:
    """The memo's file and the corpus identity write these: they must be what astuple gave before."""
    import dataclasses

    from raglens.corpus_memo import FileSignature

    signature = FileSignature(1, 2, 3, 4, 5)
    assert signature.numbers() == dataclasses.astuple(signature) == (1, 2, 3, 4, 5)
