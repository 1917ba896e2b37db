"""The corpus pane's listing of folders, against the corpus it lists: every file once, under its own
folder, in the corpus's order, each folder once, under its parent."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from raglens.corpus import Corpus, SkippedFile, SkipReason, SourceFile
from raglens.ui.widgets.corpus_tree import Child, list_folders

segments = st.sampled_from(["a", "b", "c", "src", "x.py"])
paths = st.lists(segments, min_size=1, max_size=4).map("/".join)


def corpus_of(files: list[str], skipped: list[str]) -> Corpus:
    sources = tuple(SourceFile(path, "x\n", "utf-8", 2) for path in files)
    skips = tuple(SkippedFile(path, SkipReason.IGNORED, "ignored") for path in skipped)
    return Corpus(Path("/corpus"), sources, skips, "walk")


def parent_of(path: str) -> str:
    return path.rstrip("/").rpartition("/")[0]


@given(
    st.lists(paths, unique=True, max_size=25),
    st.lists(st.tuples(paths, st.booleans()).map(lambda pair: pair[0] + "/" * pair[1]), max_size=8),
)
def test_every_file_and_folder_is_listed_once_under_its_parent_in_order(
    files: list[str], skipped: list[str]
) -> None:
    corpus = corpus_of(files, skipped)
    listing = list_folders(corpus)
    children = [(folder, child) for folder, listed in listing.items() for child in listed]
    file_children = [(folder, child) for folder, child in children if child.kind == "file"]
    assert sorted(child.path for _, child in file_children) == sorted(files)
    assert sorted(child.position for _, child in file_children) == list(range(len(files)))
    assert sorted(child.position for _, child in children if child.kind == "skipped") == list(
        range(len(skipped))
    )
    for folder, child in children:
        assert parent_of(child.path) == folder, "listed under its own folder"
        if child.kind == "file":
            assert corpus.files[child.position].path == child.path
        if child.kind == "skipped":
            assert corpus.skipped[child.position].path == child.path
    folders = [child.path for _, child in children if child.kind == "folder"]
    assert sorted(folders) == sorted(set(folders)) == sorted(set(listing) - {""}), "each folder once"
    needed = {parent_of(path) for path in files + skipped}
    for folder in needed - {""}:
        assert folder in listing
    for folder, listed in listing.items():
        assert listed or folder == "", "no empty folder"
        positions = [child.position for child in listed if child.kind == "file"]
        assert positions == sorted(positions), "files in the corpus's order"
        kinds = [child.kind for child in listed if child.kind != "folder"]
        assert kinds == sorted(kinds, key=lambda kind: kind == "skipped"), "skipped files after indexed"


def test_a_folder_comes_where_its_first_file_comes() -> None:
    listing = list_folders(corpus_of(["z.md", "docs/a.md", "b.md", "docs/api/c.md"], ["build/"]))
    assert listing[""] == [
        Child("file", "z.md", 0),
        Child("folder", "docs"),
        Child("file", "b.md", 2),
        Child("skipped", "build/", 0),
    ]
    assert listing["docs"] == [Child("file", "docs/a.md", 1), Child("folder", "docs/api")]
