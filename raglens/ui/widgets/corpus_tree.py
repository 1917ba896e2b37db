"""The corpus pane: every indexed file with its window count, and every skipped file with its reason."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

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


class CorpusTree(Tree[FileEntry]):
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

    FILL_CHUNK = 1_000
    """At most this many files are added per turn of the event loop, with their folders: a corpus of
    10k files fills over turns, where filling it at once held the loop for 0.4 s."""
    TURN_BUDGET_S = 0.008
    """A turn adds files (or lets the last corpus's nodes go) for about this long, then yields: a
    chunk of 1,000 files took 25-100 ms of the loop at 100k windows, with the other threads busy."""
    TURN_LEAST = 50
    """Files added in a turn however slow it is, so that a loaded machine still fills the tree."""

    class Filled(Message):
        """Every node of the corpus last shown is in the tree."""

    _filling = False
    """While nodes are added in bulk: the tree's caches are invalidated once, after the last."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(Text("corpus"), id=id)
        self.show_root = False
        self.guide_depth = 2
        self._fill_number = 0
        """Counts the corpora shown: a fill still running for an older one stops (0: none shown yet)."""
        self._node_of_path: dict[str, TreeNode[FileEntry]] = {}
        self._retired: list[TreeNode[FileEntry]] = []
        """Folders of corpora shown before, whose children are let go a few at a time."""
        self._letting_go = False
        """Whether a turn that lets retired folders go is due (one chain of them at a time)."""

    def show_corpus(self, corpus: Corpus, file_rows: Mapping[str, range]) -> None:
        """Rebuild the tree for ``corpus`` (``file_rows``: each file's windows): at once when it fills
        within a turn's budget (always at TURN_LEAST files or fewer), else over a few turns of the
        event loop, showing the first files meanwhile; ``Filled`` is posted when all of it is in."""
        self._fill_number += 1
        self._filling = True
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
        self._node_of_path = {}
        self._fill(self._fill_number, self._add_nodes(corpus, file_rows))

    @property
    def is_filled(self) -> bool:
        """Whether a corpus was shown and every node of the last one is in the tree."""
        return self._fill_number > 0 and not self._filling

    @property
    def holds_retired_nodes(self) -> bool:
        """Whether nodes of a corpus shown before are still to be let go."""
        return bool(self._retired)

    def _fill(self, number: int, steps: Iterator[None]) -> None:
        """Add files of corpus ``number`` for a turn's budget; the rest in a later turn of the loop."""
        if number != self._fill_number:
            return  # another corpus replaced it
        deadline = time.perf_counter() + self.TURN_BUDGET_S
        for added in range(1, self.FILL_CHUNK + 1):
            if next(steps, StopIteration) is StopIteration:
                self._filling = False
                self._invalidate()
                self.post_message(self.Filled())
                if self._retired and not self._letting_go:
                    self._letting_go = True
                    self._next_turn(self._let_retired_go)
                return
            if added >= self.TURN_LEAST and time.perf_counter() > deadline:
                break
        self._next_turn(functools.partial(self._fill, number, steps))

    def _let_retired_go(self) -> None:
        """Empty retired folders for a turn's budget: each leaf is freed by its reference count."""
        deadline = time.perf_counter() + self.TURN_BUDGET_S
        while self._retired and not self._filling:
            self._retired.pop()._children.clear()
            if time.perf_counter() > deadline:
                self._next_turn(self._let_retired_go)
                return
        self._letting_go = False  # done, or paused by a fill, whose end starts it again

    def _next_turn(self, step: Callable[[], None]) -> None:
        """Run ``step`` in a later turn of the event loop."""
        self.set_timer(0.001, step)  # 0 divides by zero in Textual

    def _add_nodes(self, corpus: Corpus, file_rows: Mapping[str, range]) -> Iterator[None]:
        """Add the corpus's nodes, a file (and the folders it needs) a step."""
        self.root.set_label(Text(printable_name(str(corpus.root))))
        folders: dict[str, TreeNode[FileEntry]] = {"": self.root}

        def folder_of(path: str) -> TreeNode[FileEntry]:
            # A loop, not recursion: a closure that calls itself is a reference cycle, and with the
            # heap frozen (MainScreen._settle_heap) it would keep this tree alive after the next one.
            parent = path.rstrip("/").rpartition("/")[0]
            missing = []
            while parent not in folders:
                missing.append(parent)
                parent = parent.rpartition("/")[0]
            for folder in reversed(missing):
                name = folder.rpartition("/")[2]
                label = Text(printable_name(name) + "/", style="bold")
                folders[folder] = folders[folder.rpartition("/")[0]].add(label, expand=True)
            return folders[path.rstrip("/").rpartition("/")[0]]

        # Folders are added expanded: TreeNode.expand_all() would post a NodeExpanded message per
        # node, and dispatching 12k of them (a corpus of 10k files) held the event loop for ~0.9 s.
        for source in corpus.files:
            name = source.path.rpartition("/")[2]
            label = Text(printable_name(name))
            label.append(f"  {len(file_rows.get(source.path, range(0)))}", style="cyan")
            if source.decoding_note:
                label.append(" !", style="yellow")
            node = folder_of(source.path).add_leaf(label, FileEntry(source.path, indexed=True))
            self._node_of_path[source.path] = node
            yield
        for skipped in corpus.skipped:
            name = skipped.path.rstrip("/").rpartition("/")[2] + ("/" if skipped.path.endswith("/") else "")
            label = Text(printable_name(name), style="dim strike")
            label.append(f"  {printable(skipped.reason.value)}", style="dim italic")
            node = folder_of(skipped.path).add_leaf(label, FileEntry(skipped.path, False, skipped.detail))
            self._node_of_path.setdefault(skipped.path, node)
            yield

    def process_label(self, label: str | Text) -> Text:
        """A label as given: every label here is one line of Text already (Tree splits each into
        lines and copies it, a third of the time it took to fill the tree)."""
        return label if isinstance(label, Text) else super().process_label(label)

    def _invalidate(self) -> None:
        """Textual's Tree refreshes its layout on every node added (~40% of filling 10k files);
        while filling, once at the end instead."""
        if not self._filling:
            super()._invalidate()

    def _build(self) -> None:
        """Textual's Tree lists its lines with a closure that calls itself: a reference cycle holding
        every line, promoted to the oldest generation by the collections its 12k allocations set off.
        With the collector paused while it runs, the cycle stays young and the next collection takes
        it; in the oldest generation, the next freeze of the heap would keep it, and the old tree's
        nodes with it, for good. The pause also keeps a full collection out of the middle of it."""
        with collector_paused():
            super()._build()

    def get_label_width(self, node: TreeNode[FileEntry]) -> int:
        """The label's width without rendering it: the tree measures every line on each rebuild."""
        icon = (self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE) if node.allow_expand else ""
        label = node.label
        return cell_len(icon) + (label.cell_len if isinstance(label, Text) else cell_len(label))

    def node_for(self, path: str) -> TreeNode[FileEntry] | None:
        """The node of ``path`` (indexed or skipped), if the tree shows it."""
        return self._node_of_path.get(path)

    def on_tree_node_selected(self, event: Tree.NodeSelected[FileEntry]) -> None:
        entry = event.node.data
        if entry is None:
            return
        event.stop()
        if entry.indexed:
            self.post_message(self.FileSelected(entry.path))
        else:
            self.post_message(self.SkippedFileSelected(entry.path, entry.detail))
