from __future__ import annotations

import codecs
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raglens.corpus import MAX_IGNORE_FILE_BYTES, CorpusOptions, SkipReason, load_corpus, scan_corpus
from raglens.errors import BadInputError, NothingIndexableError
from tests.conftest import MakeTree


def skipped_reasons(root: Path, **options: int) -> dict[str, SkipReason]:
    corpus = scan_corpus(root, CorpusOptions(**options))
    return {entry.path: entry.reason for entry in corpus.skipped}


def indexed(root: Path) -> list[str]:
    return [f.path for f in scan_corpus(root).files]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_walk_honours_nested_gitignores_and_negation(make_tree: MakeTree) -> None:
    root = make_tree(
        {
            ".gitignore": "*.log\nsecrets/\n",
            "app.py": "print('hi')\n",
            "debug.log": "noise\n",
            "secrets/key.txt": "hunter2\n",
            "docs/.gitignore": "!keep.log\ndraft-*\n",
            "docs/keep.log": "kept by negation\n",
            "docs/other.log": "still ignored\n",
            "docs/draft-1.md": "draft\n",
            "docs/guide.md": "# Guide\n",
        }
    )
    corpus = scan_corpus(root)
    assert corpus.listing == "walk"
    assert indexed(root) == [".gitignore", "app.py", "docs/.gitignore", "docs/guide.md", "docs/keep.log"]
    reasons = skipped_reasons(root)
    assert reasons["debug.log"] is SkipReason.IGNORED
    assert reasons["secrets/"] is SkipReason.IGNORED
    assert reasons["docs/other.log"] is SkipReason.IGNORED
    assert reasons["docs/draft-1.md"] is SkipReason.IGNORED


def test_vendored_folders_and_lock_files_are_skipped_by_default(make_tree: MakeTree) -> None:
    root = make_tree(
        {
            "main.js": "console.log(1)\n",
            "node_modules/lib/index.js": "module.exports = 1\n",
            ".venv/lib/site.py": "x = 1\n",
            "__pycache__/m.cpython-311.pyc": b"\x00\x01",
            "package-lock.json": "{}\n",
            "dist/bundle.min.js": "var a=1;\n",
            "static/app.min.js": "var b=2;\n",
            "poetry.lock": "[[package]]\n",
        }
    )
    assert indexed(root) == ["main.js"]
    reasons = skipped_reasons(root)
    assert reasons["node_modules/"] is SkipReason.VENDORED
    assert reasons[".venv/"] is SkipReason.VENDORED
    assert reasons["dist/"] is SkipReason.VENDORED
    assert reasons["package-lock.json"] is SkipReason.GENERATED
    assert reasons["static/app.min.js"] is SkipReason.GENERATED
    assert reasons["poetry.lock"] is SkipReason.GENERATED


def test_inside_git_the_file_list_comes_from_git(make_tree: MakeTree) -> None:
    root = make_tree(
        {
            ".gitignore": "build-output/\n*.tmp\n",
            "tracked.py": "a = 1\n",
            "untracked.md": "# new\n",
            "scratch.tmp": "ignored\n",
            "build-output/x.txt": "ignored folder\n",
            "sub/.gitignore": "local.txt\n",
            "sub/local.txt": "ignored by a nested rule\n",
            "sub/kept.txt": "kept\n",
        }
    )
    git(root, "init", "-q")
    (root / ".git" / "info" / "exclude").write_text("excluded-by-info.txt\n")
    (root / "excluded-by-info.txt").write_text("never listed\n")
    git(root, "add", "tracked.py", ".gitignore")
    git(root, "commit", "-qm", "init")
    corpus = scan_corpus(root)
    assert corpus.listing == "git"
    assert indexed(root) == [".gitignore", "sub/.gitignore", "sub/kept.txt", "tracked.py", "untracked.md"]
    reasons = skipped_reasons(root)
    assert reasons["scratch.tmp"] is SkipReason.IGNORED
    assert reasons["build-output/"] is SkipReason.IGNORED
    assert reasons["sub/local.txt"] is SkipReason.IGNORED
    assert reasons["excluded-by-info.txt"] is SkipReason.IGNORED


def test_a_subfolder_of_a_git_work_tree_lists_relative_to_itself(make_tree: MakeTree) -> None:
    root = make_tree(
        {"top.txt": "top\n", "inner/a.txt": "a\n", "inner/b.tmp": "b\n", ".gitignore": "*.tmp\n"}
    )
    git(root, "init", "-q")
    corpus = scan_corpus(root / "inner")
    assert (corpus.listing, [f.path for f in corpus.files]) == ("git", ["a.txt"])
    assert corpus.root == (root / "inner").resolve()


def test_a_tracked_file_deleted_from_the_work_tree_is_reported(make_tree: MakeTree) -> None:
    root = make_tree({"a.txt": "a\n", "gone.txt": "g\n"})
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")
    (root / "gone.txt").unlink()
    assert skipped_reasons(root)["gone.txt"] is SkipReason.VANISHED


def test_per_file_skips_each_with_its_reason(make_tree: MakeTree) -> None:
    root = make_tree(
        {
            "ok.txt": "fine\n",
            "image.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
            "big.txt": "x" * 2001,
            "empty.txt": "",
            "blank.txt": "  \n\t\n",
        }
    )
    corpus = scan_corpus(root, CorpusOptions(max_file_bytes=2000))
    by_path = {entry.path: entry for entry in corpus.skipped}
    assert [f.path for f in corpus.files] == ["ok.txt"]
    assert by_path["image.png"].reason is SkipReason.BINARY
    assert by_path["big.txt"].reason is SkipReason.TOO_LARGE
    assert "2.0 kB over the 2.0 kB limit" in by_path["big.txt"].detail
    assert (by_path["empty.txt"].reason, by_path["empty.txt"].detail) == (SkipReason.EMPTY, "empty")
    assert by_path["blank.txt"].detail == "only whitespace"


def test_drawings_and_number_dumps_are_data_not_text(make_tree: MakeTree) -> None:
    """SVG path data topped every off-topic control question; a table of numbers reads no better."""
    path_data = "M12.5 3.25c-1.1 0-2 .9-2 2v14.5l3.2-2.4 3.3 2.4V5.25c0-1.1-.9-2-2-2z " * 60
    root = make_tree(
        {
            "docs/_static/logo.svg": f'<svg><path d="{path_data}"/></svg>\n',
            "data/points.csv": "".join(f"{i},{i * 3.25:.2f},{i * 7 % 13}\n" for i in range(400)),
            "src/table.py": "".join(
                f"LIMITS_{i} = ({i}, {i * 2}, {i * 3})  # bound of stage {i}\n" for i in range(80)
            ),
            "notes.md": "Release 2.4.1 shipped on 2024-03-05 with 3 fixes.\n",
        }
    )
    corpus = scan_corpus(root, CorpusOptions())
    by_path = {entry.path: entry for entry in corpus.skipped}
    assert sorted(f.path for f in corpus.files) == ["notes.md", "src/table.py"], "code with numbers is text"
    assert by_path["docs/_static/logo.svg"].reason is SkipReason.GENERATED
    assert by_path["docs/_static/logo.svg"].detail == "a vector drawing (SVG): coordinates, not text"
    assert by_path["data/points.csv"].reason is SkipReason.GENERATED
    assert by_path["data/points.csv"].detail.startswith("data, not text: ")


def test_encodings_bom_utf16_cp1252_and_crlf(make_tree: MakeTree) -> None:
    root = make_tree(
        {
            "bom.txt": codecs.BOM_UTF8 + b"with bom\n",
            "utf16.txt": codecs.BOM_UTF16_LE + "wide text\n".encode("utf-16-le"),
            "latin.txt": "caf\xe9\n".encode("cp1252"),
            "crlf.txt": b"one\r\ntwo\r\n",
        }
    )
    files = {f.path: f for f in scan_corpus(root).files}
    assert files["bom.txt"].text == "with bom\n"
    assert files["utf16.txt"].text == "wide text\n"
    assert files["latin.txt"].text == "café\n"
    assert "Windows-1252" in files["latin.txt"].decoding_note
    assert files["crlf.txt"].text == "one\r\ntwo\r\n", "text is kept exactly; lines are counted later"


def test_symlinks_loops_escapes_and_duplicates(make_tree: MakeTree, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret outside the root\n")
    root = make_tree({"real.txt": "the real file\n", "sub/inner.txt": "inner\n"})
    os.symlink("loop_b", root / "loop_a")
    os.symlink("loop_a", root / "loop_b")
    os.symlink(outside, root / "escape.txt")
    os.symlink("missing.txt", root / "dangling.txt")
    os.symlink("real.txt", root / "alias.txt")
    os.symlink("..", root / "sub" / "up")  # a folder cycle
    corpus = scan_corpus(root)
    assert [f.path for f in corpus.files] == ["real.txt", "sub/inner.txt"]
    details = {entry.path: entry.detail for entry in corpus.skipped}
    assert details["loop_a"] == "symlink loop"
    assert details["escape.txt"] == "symlink to outside the root, not followed"
    assert details["dangling.txt"].startswith("dangling symlink")
    assert details["alias.txt"] == "symlink to real.txt, not followed"
    assert details["sub/up"] == "symlink to ., not followed"


def test_unreadable_file_is_skipped_with_the_reason(
    make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree({"ok.txt": "ok\n", "locked.txt": "locked\n"})
    real_open = Path.open

    def guarded_open(self: Path, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        if self.name == "locked.txt":
            raise PermissionError(13, "Permission denied")
        return real_open(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "open", guarded_open)
    corpus = scan_corpus(root)
    assert [f.path for f in corpus.files] == ["ok.txt"]
    [locked] = corpus.skipped
    assert (locked.reason, locked.detail) == (SkipReason.UNREADABLE, "cannot read: Permission denied")


def test_a_single_file_is_a_corpus_of_one(make_tree: MakeTree) -> None:
    root = make_tree({"notes/today.md": "# Today\n", "notes/other.md": "# Other\n"})
    corpus = load_corpus(root / "notes" / "today.md")
    assert (corpus.listing, [f.path for f in corpus.files]) == ("file", ["today.md"])
    assert corpus.root == (root / "notes").resolve()


def test_missing_path_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="no such file or folder") as raised:
        load_corpus(tmp_path / "nope")
    assert raised.value.exit_code == 2


def test_empty_folder_and_nothing_indexable_exit_3(make_tree: MakeTree, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(NothingIndexableError, match="the folder is empty") as raised:
        load_corpus(empty)
    assert raised.value.exit_code == 3
    root = make_tree({"a.bin": b"\x00\x01\x02", "b.txt": ""})
    with pytest.raises(NothingIndexableError, match=r"2 skipped: a\.bin: binary.*b\.txt: empty"):
        load_corpus(root)


def test_max_file_bytes_must_be_positive() -> None:
    with pytest.raises(BadInputError, match="must be positive"):
        CorpusOptions(max_file_bytes=0)


def test_a_file_edited_resized_or_removed_after_reading_counts_as_changed(make_tree: MakeTree) -> None:
    root = make_tree({"a.md": "alpha\n", "b.md": "beta\n", "c.md": "gamma\n"})
    corpus = load_corpus(root)
    assert not any(corpus.changed_on_disk(source.path) for source in corpus.files)
    stat = (root / "a.md").stat()
    os.utime(root / "a.md", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    (root / "b.md").write_text("beta, longer\n")
    (root / "c.md").unlink()
    assert [corpus.changed_on_disk(p) for p in ("a.md", "b.md", "c.md")] == [True, True, True]


def test_a_file_deleted_or_grown_between_listing_and_reading(
    make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree({"stays.md": "kept\n", "goes.md": "deleted after listing\n", "grows.md": "small\n"})
    import raglens.corpus as corpus_module

    real_read = corpus_module.read_source

    def meddle_then_read(folder: Path, rel_path: str, *rest):  # type: ignore[no-untyped-def]
        if rel_path == "goes.md":
            (root / "goes.md").unlink()
        if rel_path == "grows.md":
            (root / "grows.md").write_text("x" * 5000, encoding="utf-8")
        return real_read(folder, rel_path, *rest)

    monkeypatch.setattr(corpus_module, "read_source", meddle_then_read)
    corpus = scan_corpus(root, CorpusOptions(max_file_bytes=1000))
    assert [f.path for f in corpus.files] == ["stays.md"]
    reasons = {s.path: s.reason for s in corpus.skipped}
    assert reasons == {"goes.md": SkipReason.VANISHED, "grows.md": SkipReason.TOO_LARGE}


def test_a_pipe_or_a_folder_where_a_file_was_listed_is_skipped_and_says_which(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Told apart by one lstat each: a pipe is never opened (it would block), a folder git lists as a
    file (a submodule) is named as one."""
    import raglens.corpus as corpus_module

    (tmp_path / "notes.md").write_text("a note\n", encoding="utf-8")
    os.mkfifo(tmp_path / "pipe.md")
    (tmp_path / "module").mkdir()
    listed = ["module", "notes.md", "pipe.md"]
    monkeypatch.setattr(corpus_module, "_list_by_walking", lambda root: (listed, []))
    corpus = scan_corpus(tmp_path, CorpusOptions())
    assert [source.path for source in corpus.files] == ["notes.md"]
    details = {skipped.path: (skipped.reason, skipped.detail) for skipped in corpus.skipped}
    assert details == {
        "module": (SkipReason.NOT_A_FILE, "not a regular file: a folder (a git submodule?)"),
        "pipe.md": (SkipReason.NOT_A_FILE, "not a regular file: a device, pipe or socket"),
    }


@pytest.mark.parametrize("kind", ["fifo", "device", "huge"])
def test_an_ignore_file_that_is_not_a_small_regular_file_is_not_read(tmp_path: Path, kind: str) -> None:
    """A FIFO .gitignore hung the walk forever; one linked to /dev/zero read 2.6 GB and died."""
    import os

    (tmp_path / "notes.md").write_text("a note\n", encoding="utf-8")
    ignore = tmp_path / ".gitignore"
    if kind == "fifo":
        os.mkfifo(ignore)
    elif kind == "device":
        ignore.symlink_to("/dev/zero")
    else:
        ignore.write_text("*.md\n" + "#" * (MAX_IGNORE_FILE_BYTES + 1), encoding="utf-8")
    corpus = scan_corpus(tmp_path, CorpusOptions())
    assert [source.path for source in corpus.files] == ["notes.md"], "the ignore file was not obeyed"


@given(
    st.lists(
        st.sampled_from([*"0123456789 \t\n\r", "ab", "é", "€", "\ud800", "7" * 500, " " * 300]), max_size=60
    ).map("".join)
)
def test_data_is_told_from_text_by_the_share_of_digits_among_the_visible_characters(text: str) -> None:
    from raglens.corpus import DATA_MIN_CHARS, DIGIT_SHARE_OF_DATA, _data_not_text

    visible = len(text) - sum(text.count(space) for space in " \t\n\r")
    digits = sum(text.count(digit) for digit in "0123456789")
    is_data = visible >= DATA_MIN_CHARS and digits / visible >= DIGIT_SHARE_OF_DATA
    assert (_data_not_text("notes.txt", text) is not None) == is_data


@given(st.text(alphabet="ab\r\n", max_size=40), st.integers(1, 8))
def test_a_minified_text_is_told_by_its_average_line_as_every_line_break_counts_it(
    text: str, limit: int
) -> None:
    """The LF-only count decides first where it can: the oracle counts CRLF, lone CR and LF at once."""
    import raglens.corpus as corpus_module
    from raglens.lines import LINE_BREAK

    lines = text.count("\n") + text.count("\r") - text.count("\r\n") + 1
    expected = None if len(text) / lines < limit else max(len(line) for line in LINE_BREAK.split(text))
    original = corpus_module.MINIFIED_LINE_CHARS
    corpus_module.MINIFIED_LINE_CHARS = limit
    try:
        assert corpus_module._minified_line_length(text) == expected
    finally:
        corpus_module.MINIFIED_LINE_CHARS = original


@given(
    st.lists(st.sampled_from(["package-lock", "go", "app", "min", "js", "css", "map", "lock", "sum", ""]))
    .map(".".join)
    .filter(bool)
)
def test_a_generated_file_is_told_by_its_name_as_fnmatch_tells_it(name: str) -> None:
    from fnmatch import fnmatch

    from raglens.corpus import SKIPPED_FILE_PATTERNS, _is_generated

    assert _is_generated(name) == any(fnmatch(name, pattern) for pattern in SKIPPED_FILE_PATTERNS)
