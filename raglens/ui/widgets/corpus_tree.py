"""The corpus pane: every indexed file with its window count, and every skipped file with its reason."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.widgets import Tree
from textual.widgets._tree import TreeNode

from raglens.corpus import Corpus
from raglens.printable import printable, printable_name


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

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(Text("corpus"), id=id)
        self.show_root = False
        self.guide_depth = 2

    def show_corpus(self, corpus: Corpus, window_counts: dict[str, int]) -> None:
        """Rebuild the tree for ``corpus``."""
        self.clear()
        self.root.set_label(Text(printable_name(str(corpus.root))))
        folders: dict[str, TreeNode[FileEntry]] = {"": self.root}

        def folder_of(path: str) -> TreeNode[FileEntry]:
            parent, _, _ = path.rstrip("/").rpartition("/")
            if parent not in folders:
                grand_parent = folder_of(parent)
                name = parent.rpartition("/")[2]
                folders[parent] = grand_parent.add(
                    Text(printable_name(name) + "/", style="bold"), expand=True
                )
            return folders[parent]

        for source in corpus.files:
            name = source.path.rpartition("/")[2]
            label = Text(printable_name(name))
            label.append(f"  {window_counts.get(source.path, 0)}", style="cyan")
            if source.decoding_note:
                label.append(" !", style="yellow")
            folder_of(source.path).add_leaf(label, FileEntry(source.path, indexed=True))
        for skipped in corpus.skipped:
            name = skipped.path.rstrip("/").rpartition("/")[2] + ("/" if skipped.path.endswith("/") else "")
            label = Text(printable_name(name), style="dim strike")
            label.append(f"  {printable(skipped.reason.value)}", style="dim italic")
            folder_of(skipped.path).add_leaf(label, FileEntry(skipped.path, False, skipped.detail))
        self.root.expand_all()

    def node_for(self, path: str) -> TreeNode[FileEntry] | None:
        """The node of ``path`` (indexed or skipped), if the tree shows it."""
        waiting = [self.root]
        while waiting:
            node = waiting.pop()
            if node.data is not None and node.data.path == path:
                return node
            waiting.extend(node.children)
        return None

    def on_tree_node_selected(self, event: Tree.NodeSelected[FileEntry]) -> None:
        entry = event.node.data
        if entry is None:
            return
        event.stop()
        if entry.indexed:
            self.post_message(self.FileSelected(entry.path))
        else:
            self.post_message(self.SkippedFileSelected(entry.path, entry.detail))
