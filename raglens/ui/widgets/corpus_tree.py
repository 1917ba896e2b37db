"""The corpus pane: every indexed file with its window count, and every skipped file with its reason.

A folder's nodes are made when it is first opened: after the corpus's top level, folders open
shallowest first only while the tree stays within ``CorpusTree.LINE_BUDGET`` lines, and the rest wait
for the user; a corpus read again keeps the folders the user opened or closed as they were.
"""

from __future__ import annotations

import functools
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from rich.cells import cell_len
from rich.text import Text
from textual.message import Message
from textual.widgets import Tree
from textual.widgets._tree import TreeNode

from raglens.corpus import Corpus
from raglens.printable import printable, printable_name
from raglens.ui.collector import collector_paused


@dataclass(frozen=True)
class FileEntry:
    """What a leaf of the tree stands for."""

    path: str
    indexed: bool
    detail: str = ""
    """Why the file is skipped, for a skipped one."""


@dataclass(frozen=True)
class FolderEntry:
    """What a folder's node stands for: the folder's path, whose listing names its children."""

    path: str


Entry = FileEntry | FolderEntry


Child = tuple[Literal["folder", "file", "skipped"], str, int]
"""One line under a folder: ``("folder", path, -1)``, an indexed file ``("file", path, position in
Corpus.files)`` or a skipped one ``("skipped", path, position in Corpus.skipped)``. A plain tuple of a
string, a string and an int, which the garbage collector stops tracking at its first pass (it never
does for a subclass, a NamedTuple): of a listing of 10k files, only its ~2k lists (one a folder) are
left for the app's collections to scan."""

FolderListing = dict[str, list[Child]]
"""Each folder's children by the folder's path (``""``: the corpus's root)."""


def list_folders(corpus: Corpus) -> FolderListing:
    """Each folder's children (``""``: the corpus's root) in the order the tree shows them: a folder
    where its first file comes, indexed files as the corpus lists them, skipped ones after them."""
    listing: FolderListing = {"": []}

    def add(kind: Literal["file", "skipped"], path: str, position: int) -> None:
        folder = path.rstrip("/").rpartition("/")[0]
        missing = []
        parent = folder
        while parent not in listing:
            missing.append(parent)
            parent = parent.rpartition("/")[0]
        for new in reversed(missing):
            listing[new.rpartition("/")[0]].append(("folder", new, -1))
            listing[new] = []
        listing[folder].append((kind, path, position))

    for position, source in enumerate(corpus.files):
        add("file", source.path, position)
    for position, skipped in enumerate(corpus.skipped):
        add("skipped", skipped.path, position)
    return listing


class CorpusTree(Tree[Entry]):
    """A folder tree of the corpus; selecting an indexed file asks to show it."""

    class FileSelected(Message):
        """The user chose an indexed file."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    class SkippedFileSelected(Message):
        """The user chose a skipped file; ``detail`` says why it is not indexed."""

        def __init__(self, path: str, detail: str) -> None:
            super().__init__()
            self.path = path
            self.detail = detail

    LINE_BUDGET = 1_000
    """Below the top level (always listed whole), the corpus's folders are shown open, shallowest
    first, only while the tree stays within this many lines; the others open when the user asks.
    Textual's Tree lists every shown line again on each change: 12k lines (a corpus of 10k files,
    every folder open) took 55-120 ms of the loop a time."""
    FILL_CHUNK = 1_000
    """At most this many nodes are added per turn of the event loop: a folder of 10k files opens over
    turns, where filling it at once held the loop for 0.4 s."""
    TURN_BUDGET_S = 0.008
    """A turn adds nodes (or lets the last corpus's nodes go) for about this long, then yields: a
    chunk of 1,000 files took 25-100 ms of the loop at 100k windows, with the other threads busy."""
    TURN_LEAST = 50
    """Nodes added in a turn however slow it is, so that a loaded machine still fills the tree."""

    class Filled(Message):
        """The corpus last shown is in the tree with the folders it opens with (and any the user
        opened meanwhile); a folder the user opens later posts none."""

    _fills = 0
    """How many fills are adding nodes: the tree's caches are invalidated once, after the last."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(Text("corpus"), id=id)
        self.show_root = False
        self.guide_depth = 2
        self._fill_number = 0
        """Counts the corpora shown: a fill still running for an older one stops (0: none shown yet)."""
        self._corpus: Corpus | None = None
        self._file_rows: Mapping[str, range] = {}
        self._listing: FolderListing = {}
        self._unlisted: dict[str, TreeNode[Entry]] = {}
        """The folders shown whose children are not nodes yet, by path."""
        self._node_of_path: dict[str, TreeNode[Entry]] = {}
        self._retired: list[TreeNode[Entry]] = []
        """Folders of corpora shown before, whose children are let go a few at a time."""
        self._letting_go = False
        """Whether a turn that lets retired folders go is due (one chain of them at a time)."""
        self._corpus_filling = False
        """Whether the fills under way include the corpus's own, whose end posts ``Filled``."""
        self._was_open: set[str] = set()
        self._was_closed: set[str] = set()
        """The folders shown open and shown closed when the corpus was last replaced, by path: a
        corpus read again opens and closes them as the user left them."""

    def show_corpus(
        self, corpus: Corpus, file_rows: Mapping[str, range], folders: FolderListing | None = None
    ) -> None:
        """Rebuild the tree for ``corpus`` (``file_rows``: each file's windows), opening its folders
        within ``LINE_BUDGET`` lines: at once when that fits in a turn's budget (always at TURN_LEAST
        nodes or fewer), else over a few turns of the event loop, showing the first meanwhile;
        ``Filled`` is posted when all of them are in. Folders shown before keep their state.

        ``folders`` is ``list_folders(corpus)`` where a worker made it (12-40 ms of the loop at 10k
        files); made here otherwise.
        """
        if folders is None:
            folders = list_folders(corpus)
        self._fill_number += 1
        if not self._corpus_filling:  # a fill cut short has not opened the folders it was to open
            self._was_open, self._was_closed = set(), set()
            for node in self._tree_nodes.values():
                if isinstance(entry := node.data, FolderEntry):
                    (self._was_open if node._expanded else self._was_closed).add(entry.path)
        # Tree.clear() alone leaves the old nodes in Tree._tree_nodes and in reference cycles (a
        # folder and its children), garbage only a full collection over the whole heap finds (0.3 s
        # at 100k windows), and never once the heap is frozen. Unlinking them all at once held the
        # loop 20-90 ms at 10k files: their folders are retired here and emptied after the fill.
        # Tree's private register and child lists are used as Textual 8.2 has them (the tests of
        # this module fail where that changes).
        self._retired.extend(node for node in self._tree_nodes.values() if node._children)
        self._tree_nodes = {}
        self.clear()
        self._tree_nodes[self.root.id] = self.root  # registered, as Tree registers the root it makes
        self.root.set_label(Text(printable_name(str(corpus.root))))
        self._corpus, self._file_rows = corpus, file_rows
        self._listing = folders
        self._unlisted = {"": self.root}
        self._node_of_path = {}
        self._fills = 0  # an older corpus's fills stop at their next turn
        self._corpus_filling = True
        self._fill(self._fill_number, self._open_within_budget())

    @property
    def is_filled(self) -> bool:
        """Whether a corpus was shown and every node due (its first folders', the opened ones') is in."""
        return self._fill_number > 0 and not self._fills

    @property
    def holds_retired_nodes(self) -> bool:
        """Whether nodes of a corpus shown before are still to be let go."""
        return bool(self._retired)

    def _fill(self, number: int, steps: Iterator[None]) -> None:
        """Add nodes from ``steps`` for a turn's budget, the rest in later turns of the loop."""
        self._fills += 1
        self._fill_turn(number, steps)

    def _fill_turn(self, number: int, steps: Iterator[None]) -> None:
        if number != self._fill_number:
            return  # another corpus replaced it
        deadline = time.perf_counter() + self.TURN_BUDGET_S
        for added in range(1, self.FILL_CHUNK + 1):
            if next(steps, StopIteration) is StopIteration:
                self._fills -= 1
                if not self._fills:
                    self._invalidate()
                    if self._corpus_filling:
                        self._corpus_filling = False
                        self.post_message(self.Filled())
                    if self._retired and not self._letting_go:
                        self._letting_go = True
                        self._next_turn(self._let_retired_go)
                return
            if added >= self.TURN_LEAST and time.perf_counter() > deadline:
                break
        self._next_turn(functools.partial(self._fill_turn, number, steps))

    def _let_retired_go(self) -> None:
        """Empty retired folders for a turn's budget: each leaf is freed by its reference count."""
        deadline = time.perf_counter() + self.TURN_BUDGET_S
        while self._retired and not self._fills:
            self._retired.pop()._children.clear()
            if time.perf_counter() > deadline:
                self._next_turn(self._let_retired_go)
                return
        self._letting_go = False  # done, or paused by a fill, whose end starts it again

    def _next_turn(self, step: Callable[[], None]) -> None:
        """Run ``step`` in a later turn of the event loop."""
        self.set_timer(0.001, step)  # 0 divides by zero in Textual

    def _open_within_budget(self) -> Iterator[None]:
        """List the root's children, then open folders breadth-first while the tree stays within
        ``LINE_BUDGET`` lines, a node a step; a folder too big for what is left stays closed. A
        folder the corpus shown before had open opens, and one it had closed stays closed."""
        shown = len(self._listing[""])
        yield from self._list("")
        waiting = deque(path for kind, path, _ in self._listing[""] if kind == "folder")
        while waiting:
            folder = waiting.popleft()
            children = self._listing[folder]
            node = self._unlisted.get(folder)
            if node is None or folder in self._was_closed:
                continue  # listed already (the user opened it meanwhile), or closed by the user
            if folder not in self._was_open and shown + len(children) > self.LINE_BUDGET:
                continue  # too big: its children stay out of the tree
            # Set, not expand(): that posts a NodeExpanded message per folder, and dispatching 12k of
            # them (a corpus of 10k files) held the event loop for ~0.9 s.
            node._expanded = True
            shown += len(children)
            yield from self._list(folder)
            waiting.extend(path for kind, path, _ in children if kind == "folder")

    def _list(self, folder: str) -> Iterator[None]:
        """Add the children of ``folder``'s node (shown, not listed yet), a node a step."""
        parent = self._unlisted.pop(folder)
        corpus = self._corpus
        assert corpus is not None
        for kind, path, position in self._listing[folder]:
            name = path.rstrip("/").rpartition("/")[2]
            if kind == "folder":
                label = Text(printable_name(name) + "/", style="bold")
                self._unlisted[path] = parent.add(label, FolderEntry(path))
            elif kind == "file":
                source = corpus.files[position]
                label = Text(printable_name(name))
                label.append(f"  {len(self._file_rows.get(source.path, range(0)))}", style="cyan")
                if source.decoding_note:
                    label.append(" !", style="yellow")
                self._node_of_path[source.path] = parent.add_leaf(label, FileEntry(source.path, True))
            else:
                skipped = corpus.skipped[position]
                label = Text(printable_name(name + ("/" if skipped.path.endswith("/") else "")), "dim strike")
                label.append(f"  {printable(skipped.reason.value)}", style="dim italic")
                leaf = parent.add_leaf(label, FileEntry(skipped.path, False, skipped.detail))
                self._node_of_path.setdefault(skipped.path, leaf)
            yield

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[Entry]) -> None:
        """A folder opened for the first time: its children become nodes (over turns, for a big one)."""
        entry = event.node.data
        if isinstance(entry, FolderEntry) and self._unlisted.get(entry.path) is event.node:
            self._fill(self._fill_number, self._list(entry.path))

    def process_label(self, label: str | Text) -> Text:
        """A label as given: every label here is one line of Text already (Tree splits each into
        lines and copies it, a third of the time it took to fill the tree)."""
        return label if isinstance(label, Text) else super().process_label(label)

    def _invalidate(self) -> None:
        """Textual's Tree refreshes its layout on every node added (~40% of filling 10k files);
        while filling, once at the end instead."""
        if not self._fills:
            super()._invalidate()

    def _build(self) -> None:
        """Textual's Tree lists its lines with a closure that calls itself: a reference cycle holding
        every line, promoted to the oldest generation by the collections its 12k allocations set off.
        With the collector paused while it runs, the cycle stays young and the next collection takes
        it; in the oldest generation, the next freeze of the heap would keep it, and the old tree's
        nodes with it, for good. The pause also keeps a full collection out of the middle of it."""
        with collector_paused():
            super()._build()

    def get_label_width(self, node: TreeNode[Entry]) -> int:
        """The label's width without rendering it: the tree measures every line on each rebuild."""
        icon = (self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE) if node.allow_expand else ""
        label = node.label
        return cell_len(icon) + (label.cell_len if isinstance(label, Text) else cell_len(label))

    def node_for(self, path: str) -> TreeNode[Entry] | None:
        """The node of ``path`` (indexed or skipped), if it is in the tree: its folder was listed."""
        return self._node_of_path.get(path)

    def on_tree_node_selected(self, event: Tree.NodeSelected[Entry]) -> None:
        entry = event.node.data
        if not isinstance(entry, FileEntry):
            return  # a folder: Tree opens or closes it
        event.stop()
        if entry.indexed:
            self.post_message(self.FileSelected(entry.path))
        else:
            self.post_message(self.SkippedFileSelected(entry.path, entry.detail))
