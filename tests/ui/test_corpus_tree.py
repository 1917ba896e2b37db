"""The corpus pane at scale: a large corpus fills over a few turns of the event loop, and the tree it
replaces is freed by reference counting alone (the app freezes its heap, which a cycle would pin)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Tree

from raglens.corpus import Corpus, SourceFile
from raglens.ui.widgets.corpus_tree import CorpusTree, FileEntry, FolderEntry, list_folders
from tests.ui.conftest import wait_until


def corpus_of(files: int, folder: str) -> Corpus:
    """``files`` one-line files, ten to a folder, under ``folder``."""
    sources = tuple(
        SourceFile(f"{folder}/part{number // 10}/file{number}.py", f"x = {number}\n", "utf-8", 8)
        for number in range(files)
    )
    return Corpus(Path("/corpus"), sources, (), "walk")


class TreeApp(App[None]):
    """The corpus tree alone, counting the times it said it was filled."""

    def __init__(self) -> None:
        super().__init__()
        self.filled = 0

    def compose(self) -> ComposeResult:
        yield CorpusTree(id="tree")

    def on_corpus_tree_filled(self, message: CorpusTree.Filled) -> None:
        self.filled += 1


async def test_a_large_corpus_fills_over_turns_of_the_loop_then_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(CorpusTree, "TURN_BUDGET_S", 60.0)  # the chunk's bound alone
    monkeypatch.setattr(CorpusTree, "LINE_BUDGET", 10**6)  # every folder open
    corpus = corpus_of(CorpusTree.FILL_CHUNK * 2 + 7, "big")
    app = TreeApp()
    async with app.run_test() as pilot:
        tree = app.query_one(CorpusTree)
        tree.show_corpus(corpus, {source.path: range(1) for source in corpus.files})
        assert not tree.is_filled, "no more than one chunk is added in the call"
        assert len(tree._tree_nodes) == 1 + CorpusTree.FILL_CHUNK, "a chunk is of nodes, beside the root"
        await wait_until(pilot, lambda: app.filled == 1, "the tree filled")
        assert tree.is_filled
        assert all(tree.node_for(source.path) is not None for source in corpus.files)
        folders = 1 + -(-len(corpus.files) // 10)
        assert len(tree._tree_lines) == folders + len(corpus.files), "every folder is open"


async def test_a_large_corpus_opens_its_shallowest_folders_within_the_line_budget() -> None:
    """A tree of 10k files with every folder open held the loop 55-120 ms each time Textual listed its
    lines: the first folders open, breadth-first, while the lines fit; the others have no nodes yet."""
    corpus = corpus_of(CorpusTree.LINE_BUDGET * 2, "big")  # one folder of 200 folders of 10 files
    app = TreeApp()
    async with app.run_test() as pilot:
        tree = app.query_one(CorpusTree)
        tree.show_corpus(corpus, {})
        await wait_until(pilot, lambda: app.filled == 1, "the tree filled")
        parts = len(tree._listing["big"])
        lines = tree._tree_lines
        opened = (CorpusTree.LINE_BUDGET - 1 - parts) // 10  # "big/" and its folders shown first
        assert len(lines) == 1 + parts + opened * 10 <= CorpusTree.LINE_BUDGET
        shown = [line.path[-1].data for line in lines]
        assert shown[:3] == [
            FolderEntry("big"),
            FolderEntry("big/part0"),
            FileEntry("big/part0/file0.py", True),
        ]
        assert tree.node_for(f"big/part{opened - 1}/file{(opened - 1) * 10}.py") is not None
        assert tree.node_for(f"big/part{opened}/file{opened * 10}.py") is None, "a closed folder has no nodes"
        assert len(tree._tree_nodes) == 1 + len(lines)


async def test_a_folder_opened_by_the_user_lists_its_files_then() -> None:
    corpus = corpus_of(CorpusTree.LINE_BUDGET * 2, "big")
    app = TreeApp()
    async with app.run_test() as pilot:
        tree = app.query_one(CorpusTree)
        tree.show_corpus(corpus, {source.path: range(2) for source in corpus.files})
        await wait_until(pilot, lambda: app.filled == 1, "the tree filled")
        last = corpus.files[-1].path
        folder = last.rpartition("/")[0]
        assert tree.node_for(last) is None
        tree.focus()
        tree.cursor_line = next(
            number
            for number, line in enumerate(tree._tree_lines)
            if line.path[-1].data == FolderEntry(folder)
        )
        await pilot.press("space")
        await wait_until(
            pilot, lambda: tree.node_for(last) is not None and tree.is_filled, "the folder listed"
        )
        node = tree.node_for(last)
        assert node is not None and str(node.label).endswith("  2")
        assert [line.path[-1].data for line in tree._tree_lines][
            tree.cursor_line + 1 : tree.cursor_line + 11
        ] == [FileEntry(source.path, True) for source in corpus.files[-10:]], (
            "its files under it, in the corpus's order"
        )
        await pilot.press("space", "space")  # closed and opened again: listed once
        await pilot.pause()
        assert len(tree.get_node_at_line(tree.cursor_line).children) == 10  # type: ignore[union-attr]


async def test_a_big_folder_the_user_opens_fills_over_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(CorpusTree, "TURN_BUDGET_S", 60.0)  # the chunk's bound alone
    sources = tuple(
        SourceFile(f"flat/file{number}.py", "x\n", "utf-8", 2)
        for number in range(CorpusTree.FILL_CHUNK * 2 + 3)
    )
    app = TreeApp()
    async with app.run_test() as pilot:
        tree = app.query_one(CorpusTree)
        tree.show_corpus(Corpus(Path("/corpus"), sources, (), "walk"), {})
        await wait_until(pilot, lambda: app.filled == 1, "the tree filled")
        assert len(tree._tree_lines) == 1, "a folder past the line budget stays closed"
        turns: list[Callable[[], None]] = []
        monkeypatch.setattr(tree, "_next_turn", turns.append)
        tree.root.children[0].expand()
        await wait_until(pilot, lambda: bool(turns), "the first turn of the fill")
        assert len(tree._node_of_path) == CorpusTree.FILL_CHUNK and not tree.is_filled
        turns.pop()()
        turns.pop()()
        assert tree.is_filled and not turns
        await pilot.pause()
        assert app.filled == 1, "a folder the user opens says nothing: the app settles its heap on Filled"
        assert len(tree._tree_lines) == 1 + len(sources)


async def test_a_turn_adds_files_for_its_time_budget_and_no_fewer_than_its_least(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A chunk of 1,000 files held the loop 25-100 ms at 100k windows: a turn stops at its budget."""
    monkeypatch.setattr(CorpusTree, "TURN_BUDGET_S", 0.0)
    corpus = corpus_of(CorpusTree.TURN_LEAST * 3 + 1, "slow")
    app = TreeApp()
    async with app.run_test() as pilot:
        tree = app.query_one(CorpusTree)
        tree.show_corpus(corpus, {source.path: range(3) for source in corpus.files})
        assert len(tree._tree_nodes) == 1 + CorpusTree.TURN_LEAST, "past its budget, a turn adds its least"
        await wait_until(pilot, lambda: app.filled == 1, "the tree filled")
        assert all(tree.node_for(source.path) is not None for source in corpus.files)
        assert str(tree.node_for(corpus.files[0].path).label).endswith("  3")  # type: ignore[union-attr]


async def test_a_corpus_shown_before_the_last_one_filled_replaces_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(CorpusTree, "LINE_BUDGET", 10**6)  # the first corpus fills over turns
    first, second = corpus_of(CorpusTree.FILL_CHUNK * 3, "first"), corpus_of(25, "second")
    app = TreeApp()
    async with app.run_test() as pilot:
        tree = app.query_one(CorpusTree)
        tree.show_corpus(first, {})
        tree.show_corpus(second, {})
        await wait_until(pilot, lambda: app.filled >= 1, "the tree filled")
        await pilot.pause()
        assert app.filled == 1, "the first corpus's fill stopped"
        entries = [line.path[-1].data for line in tree._tree_lines]
        assert [entry for entry in entries if isinstance(entry, FileEntry)] == [
            tree.node_for(source.path).data
            for source in second.files  # type: ignore[union-attr]
        ]


async def test_the_tree_a_new_corpus_replaces_is_freed_with_the_heap_frozen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The app freezes its heap once a corpus is shown: an old node in a reference cycle (Tree.clear()
    leaves parent and children in one) would never be freed. This fails with Tree.clear() alone.

    The old folders are emptied over turns of the loop, after the new corpus is in: with no time
    budget, one folder a turn, so the first leaf checked is let go last."""
    monkeypatch.setattr(CorpusTree, "TURN_BUDGET_S", 0.0)
    old, new = corpus_of(CorpusTree.FILL_CHUNK + 50, "old"), corpus_of(30, "new")
    app = TreeApp()
    async with app.run_test() as pilot:
        tree = app.query_one(CorpusTree)
        tree.show_corpus(old, {})
        await wait_until(pilot, lambda: app.filled == 1, "the old corpus shown")
        await pilot.pause()  # drawn: the tree's lines are built
        leaf = weakref.ref(tree.node_for(old.files[0].path))  # type: ignore[arg-type]
        folder = weakref.ref(tree.root.children[0])
        gc.collect()
        gc.freeze()
        try:
            tree.show_corpus(new, {})
            await wait_until(pilot, lambda: app.filled == 2, "the new corpus shown")
            assert leaf() is not None and tree.holds_retired_nodes, "let go over turns, not in one"
            await wait_until(pilot, lambda: not tree.holds_retired_nodes, "the old folders emptied")
            gc.collect()  # frozen objects are not collected: only reference counts free them
            assert leaf() is None and folder() is None
        finally:
            gc.unfreeze()


async def test_a_tree_that_was_never_shown_a_corpus_is_not_filled() -> None:
    """Tests wait on ``is_filled`` for the nodes of a corpus: before one is shown, it must not hold."""
    app = TreeApp()
    async with app.run_test():
        tree = app.query_one(CorpusTree)
        assert not tree.is_filled
        corpus = corpus_of(12, "small")
        tree.show_corpus(corpus, {source.path: range(1) for source in corpus.files})
        assert tree.is_filled, "a corpus under one chunk is in at once"
        assert tree.node_for(corpus.files[-1].path) is not None


async def test_a_worker_s_listing_is_used_and_without_one_the_tree_lists_the_corpus() -> None:
    """The listing takes 12-40 ms at 10k files: the worker that read the corpus makes it."""
    corpus = corpus_of(30, "again")
    app = TreeApp()
    async with app.run_test():
        tree = app.query_one(CorpusTree)
        made = list_folders(corpus)
        tree.show_corpus(corpus, {}, made)
        assert tree._listing is made
        tree.show_corpus(corpus, {source.path: range(4) for source in corpus.files})
        assert tree._listing == made and tree._listing is not made
        assert str(tree.node_for(corpus.files[0].path).label).endswith("  4")  # type: ignore[union-attr]


async def test_a_corpus_read_again_keeps_the_folders_the_user_opened_and_closed() -> None:
    corpus = corpus_of(CorpusTree.LINE_BUDGET * 2, "big")  # the budget opens big/part0..part78
    app = TreeApp()
    async with app.run_test() as pilot:
        tree = app.query_one(CorpusTree)
        tree.show_corpus(corpus, {})
        await wait_until(pilot, lambda: app.filled == 1, "the tree filled")
        folder_node = {
            node.data.path: node for node in tree._tree_nodes.values() if isinstance(node.data, FolderEntry)
        }
        folder_node["big/part0"].collapse()
        folder_node["big/part150"].expand()
        await wait_until(pilot, lambda: tree.node_for("big/part150/file1500.py") is not None, "listed")
        tree.show_corpus(corpus_of(CorpusTree.LINE_BUDGET * 2, "big"), {})  # read again
        await wait_until(pilot, lambda: app.filled == 2, "the tree filled again")
        assert tree.node_for("big/part0/file0.py") is None, "closed by the user: still closed"
        assert tree.node_for("big/part150/file1500.py") is not None, "opened by the user: open again"
        assert tree.node_for("big/part1/file10.py") is not None, "the budget's others as before"


async def test_a_folder_the_user_opens_during_the_corpus_fill_is_listed_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(CorpusTree, "TURN_BUDGET_S", 0.0)  # TURN_LEAST nodes a turn
    corpus = corpus_of(CorpusTree.LINE_BUDGET * 2, "big")
    app = TreeApp()
    async with app.run_test() as pilot:
        tree = app.query_one(CorpusTree)
        turns: list[Callable[[], None]] = []
        monkeypatch.setattr(tree, "_next_turn", turns.append)
        tree.show_corpus(corpus, {})
        part = next(node for node in tree.root.children[0].children if node.data == FolderEntry("big/part3"))
        assert not part.children, "not listed yet"
        part.expand()
        await wait_until(pilot, lambda: len(part.children) == 10, "the user's folder listed")
        assert not tree.is_filled and app.filled == 0
        while turns:
            turns.pop()()
        await wait_until(pilot, lambda: app.filled == 1, "the corpus's fill ended")
        await pilot.pause()
        assert app.filled == 1 and tree.is_filled
        assert len(part.children) == 10, "the corpus's fill found it listed already"


async def test_a_folder_of_a_corpus_replaced_since_opens_nothing() -> None:
    app = TreeApp()
    async with app.run_test() as pilot:
        tree = app.query_one(CorpusTree)
        tree.show_corpus(corpus_of(CorpusTree.LINE_BUDGET * 2, "old"), {})
        await wait_until(pilot, lambda: app.filled == 1, "the old corpus shown")
        closed = next(node for node in tree.root.children[0].children if not node.is_expanded)
        tree.show_corpus(corpus_of(12, "new"), {})
        await wait_until(pilot, lambda: app.filled == 2, "the new corpus shown")
        tree.on_tree_node_expanded(Tree.NodeExpanded(closed))
        assert tree.is_filled and tree.node_for(f"{closed.data.path}/file0.py") is None  # type: ignore[union-attr]


async def test_the_top_level_is_listed_whole_past_the_line_budget() -> None:
    sources = tuple(
        SourceFile(f"file{number}.py", "x\n", "utf-8", 2) for number in range(CorpusTree.LINE_BUDGET + 200)
    )
    app = TreeApp()
    async with app.run_test() as pilot:
        tree = app.query_one(CorpusTree)
        tree.show_corpus(Corpus(Path("/corpus"), sources, (), "walk"), {})
        await wait_until(pilot, lambda: app.filled == 1, "the tree filled")
        assert len(tree._tree_lines) == len(sources)


async def test_a_corpus_read_again_before_the_last_fill_ended_opens_what_the_budget_opens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fill cut short leaves folders it had not reached yet closed: they are not the user's choice."""
    monkeypatch.setattr(CorpusTree, "TURN_BUDGET_S", 0.0)  # TURN_LEAST nodes a turn
    app = TreeApp()
    async with app.run_test() as pilot:
        tree = app.query_one(CorpusTree)
        tree.show_corpus(corpus_of(CorpusTree.LINE_BUDGET * 2, "big"), {})
        assert not tree.is_filled, "cut short by the next corpus"
        tree.show_corpus(corpus_of(CorpusTree.LINE_BUDGET * 2, "big"), {})
        await wait_until(pilot, lambda: app.filled == 1, "the tree filled")
        assert tree.node_for("big/part10/file100.py") is not None
