"""The corpus pane's listing of folders, against the corpus it lists: every file once, under its own
folder, in the corpus's order, each folder once, under its parent."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from raglens.corpus import Corpus, SkippedFile, SkipReason, SourceFile
from raglens.ui.widgets.corpus_tree import list_folders

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
    children = [(folder, *child) for folder, listed in listing.items() for child in listed]
    file_children = [(path, position) for _, kind, path, position in children if kind == "file"]
    assert sorted(path for path, _ in file_children) == sorted(files)
    assert sorted(position for _, position in file_children) == list(range(len(files)))
    assert sorted(position for _, kind, _, position in children if kind == "skipped") == list(
        range(len(skipped))
    )
    for folder, kind, path, position in children:
        assert parent_of(path) == folder, "listed under its own folder"
        if kind == "file":
            assert corpus.files[position].path == path
        if kind == "skipped":
            assert corpus.skipped[position].path == path
    folders = [path for _, kind, path, _ in children if kind == "folder"]
    assert sorted(folders) == sorted(set(folders)) == sorted(set(listing) - {""}), "each folder once"
    needed = {parent_of(path) for path in files + skipped}
    for folder in needed - {""}:
        assert folder in listing
    for folder, listed in listing.items():
        assert listed or folder == "", "no empty folder"
        positions = [position for kind, _, position in listed if kind == "file"]
        assert positions == sorted(positions), "files in the corpus's order"
        kinds = [kind for kind, _, _ in listed if kind != "folder"]
        assert kinds == sorted(kinds, key=lambda kind: kind == "skipped"), "skipped files after indexed"


def test_a_folder_comes_where_its_first_file_comes() -> None:
    listing = list_folders(corpus_of(["z.md", "docs/a.md", "b.md", "docs/api/c.md"], ["build/"]))
    assert listing[""] == [
        ("file", "z.md", 0),
        ("folder", "docs", -1),
        ("file", "b.md", 2),
        ("skipped", "build/", 0),
    ]
    assert listing["docs"] == [("file", "docs/a.md", 1), ("folder", "docs/api", -1)]


def test_the_garbage_collector_stops_tracking_a_listing_s_children() -> None:
    """A listing of 10k files stays out of every collection's scan (a NamedTuple child never leaves)."""
    import gc

    listing = list_folders(corpus_of([f"d{number % 7}/f{number}.py" for number in range(200)], ["x/"]))
    gc.collect()
    children = [child for listed in listing.values() for child in listed]
    assert len(children) == 200 + 7 + 1
    assert not any(gc.is_tracked(child) for child in children)
