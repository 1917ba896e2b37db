"""Moving through the corpus: opening files and hits, stepping windows, moving the focus.

A mixin of the app; the window view shows what these handlers choose.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from textual.widgets import Input

from raglens.ui.explorer_screen import ExplorerScreen
from raglens.ui.widgets.corpus_tree import CorpusTree
from raglens.ui.widgets.file_lines import FileLines
from raglens.ui.widgets.hit_list import HitList
from raglens.ui.widgets.pipeline_log import PipelineLog
from raglens.ui.widgets.window_view import WindowView

if TYPE_CHECKING:
    pass


PROSE_SUFFIXES = frozenset({".md", ".markdown", ".rst", ".txt", ".adoc", ".org", ".tex", ""})
"""Files whose long lines are paragraphs: the window view wraps them unless the user says otherwise."""

NARROW_BELOW = 110
"""Columns under which the corpus pane folds away: at 80, three panes leave the window view and
the hits 28 columns each."""


class Navigation(ExplorerScreen):
    """Which file and window the window view shows, and where the keyboard focus is."""

    wrap_choice: bool | None = None
    """Soft wrap as the user set it with ``s``; None: wrap prose, not code."""

    def show_file(self, path: str, current: int | None, *, scroll: bool = True) -> None:
        """Show ``path`` in the window view with window ``current`` selected."""
        if self.corpus is None:
            return
        windows = self.a.file_windows(path)
        if current is not None and not 0 <= current < len(windows):
            current = 0 if windows else None
        extent = None
        never_read: tuple[tuple[int, int], ...] = ()
        text = self.corpus.file(path).text
        index = self.a.index
        if index is not None and path in self.a.file_rows:
            rows = self.a.file_rows[path]
            if current is not None:
                extent = index.extent(rows.start + current)
            extents = [index.extent(row) for row in rows]
            known = [e for e in extents if e is not None]
            if windows and len(known) == len(extents):
                from raglens.diagnostics.coverage import unread_spans  # numpy is loaded by now

                never_read = unread_spans(len(text), windows, known)
        self.shown_window = (path, current)
        self.query_one(WindowView).show(
            path,
            text,
            windows,
            current,
            extent,
            scroll,
            never_read,
            replace(self.lens_on_file(path), other_starts=self.versus_starts(path)),
            wrap=self.wraps(path),
        )

    def wraps(self, path: str) -> bool:
        """Whether the window view soft-wraps ``path``: the user's choice, else yes for prose."""
        if self.wrap_choice is not None:
            return self.wrap_choice
        return PurePosixPath(path).suffix.lower() in PROSE_SUFFIXES

    def action_toggle_wrap(self) -> None:
        """Wrap long lines in the window view, or let them run off to the right (for every file)."""
        shown = self.shown_window
        self.wrap_choice = not self.wraps(shown[0]) if shown is not None else not self.wrap_choice
        if shown is not None:
            # The line at the top stays at the top: kept by row, the selected window left the view
            # once wrapping changed how many rows each line above it takes.
            lines = self.query_one(FileLines)
            top = lines.line_at_top()
            self.show_file(*shown, scroll=False)
            lines.scroll_to(y=lines.row_of_line(top), animate=False, force=True)

    def on_corpus_tree_file_selected(self, message: CorpusTree.FileSelected) -> None:
        self.stop_following_top_hit()
        self.show_file(message.path, 0)
        self.a.embed_next(message.path)
        self._fold_corpus_pane()

    def on_corpus_tree_skipped_file_selected(self, message: CorpusTree.SkippedFileSelected) -> None:
        self.shown_window = None  # so arriving vectors do not redraw the previous file over the message
        self.query_one(WindowView).show_message(f"{message.path} is not indexed", message.detail)
        self._fold_corpus_pane()

    def _fold_corpus_pane(self) -> None:
        """On a narrow screen, give the chosen file the corpus pane's room again (t shows it)."""
        main = self  # the main screen: its breakpoint class says whether it is narrow
        if main.has_class("-narrow") and main.has_class("-corpus-shown"):
            main.remove_class("-corpus-shown")
            self.action_focus_hits()

    def on_hit_list_hit_selected(self, message: HitList.HitSelected) -> None:
        self.stop_following_top_hit()
        self.show_file(message.hit.window.path, message.hit.window.index)
        self.a.embed_next(message.hit.window.path)

    def _step_window(self, step: int) -> None:
        self.stop_following_top_hit()
        if self.corpus is None or self.shown_window is None:
            return
        path, current = self.shown_window
        file_rows = self.a.file_rows  # rows, not windows: a window is made each time one is read
        target = (current if current is not None else -1) + step
        if 0 <= target < len(file_rows.get(path, ())):
            self.show_file(path, target)
            return
        paths = [f.path for f in self.corpus.files if f.path in file_rows]
        if path not in paths:
            return
        position = paths.index(path) + step
        if 0 <= position < len(paths):
            next_path = paths[position]
            self.show_file(next_path, 0 if step > 0 else len(file_rows[next_path]) - 1)
            self.a.embed_next(next_path)

    def action_next_window(self) -> None:
        self._step_window(1)

    def action_previous_window(self) -> None:
        self._step_window(-1)

    def action_focus_query(self) -> None:
        self.query_one("#query", Input).focus()

    def action_leave_query(self) -> None:
        """Escape from the query box to the window view, where single-letter keys work."""
        if isinstance(self.focused, Input):
            self.query_one("#window-scroll").focus()

    def action_focus_tree(self) -> None:
        """Focus the corpus tree; on a narrow screen, where the pane is folded away, show or fold it."""
        main = self  # the main screen: its breakpoint class says whether it is narrow
        tree = self.query_one(CorpusTree)
        if main.has_class("-narrow"):
            if main.has_class("-corpus-shown") and tree.has_focus:
                self._fold_corpus_pane()
                return
            main.add_class("-corpus-shown")
        tree.focus()

    def action_focus_hits(self) -> None:
        self.query_one("#hit-items").focus()

    def action_expand_hit(self) -> None:
        """Show the whole window of the hit under the cursor in place, or fold it to its first lines."""
        if self.query_one(HitList).toggle_expanded() is None:
            self.notify("no hits yet: type a question first", timeout=3)

    def action_unfold_findings(self) -> None:
        """Show the score strip's findings whole, or one line each again (a narrow pane folds them)."""
        from raglens.ui.widgets.score_strip import ScoreStrip

        strip = self.query_one(ScoreStrip)
        if strip.source is None:
            self.notify("no findings yet: type a question first", timeout=3)
            return
        if not strip.folds:
            self.notify("the findings are shown whole at this width", timeout=3)
            return
        strip.toggle_unfolded()

    def action_toggle_log(self) -> None:
        """Show or hide the pipeline log; on a narrow screen, show it over the panes, full width.

        Unfolding the corpus pane that holds it squeezed the hits to ~26 columns at 80x24.
        """
        log = self.query_one(PipelineLog)
        main = self  # the main screen: its breakpoint class says whether it is narrow
        if main.has_class("-narrow"):
            from rich.text import Text

            from raglens.ui.screens.report import LogReportScreen

            body = Text("\n".join(log.entries) or "nothing narrated yet")
            title = "Pipeline log, newest last (l or escape closes; l again: what came since)"
            self.app.push_screen(LogReportScreen(title, body))
            return
        log.display = not log.display
