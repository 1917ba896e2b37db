"""The explorer's why key (y): the highlighted hit's score, or the selected window's, taken apart.

A part of the main screen (raglens.ui.explorer_screen). The token vectors are computed by each
configuration's own embedding process, never here; a worker waits for its answers and posts them.
"""

from __future__ import annotations

import functools
from concurrent.futures import Future
from dataclasses import replace
from typing import TYPE_CHECKING

from textual.worker import get_current_worker

from raglens.ui.explorer_screen import ExplorerScreen
from raglens.ui.futures import result_unless_cancelled
from raglens.ui.messages import WhyReady, while_shown
from raglens.ui.screens.why import WhyPart, WhyScreen
from raglens.ui.widgets.hit_list import HitList
from raglens.ui.widgets.window_view import WindowView

if TYPE_CHECKING:
    from raglens.attribution import Attribution
    from raglens.run import ConfigurationRun
    from raglens.search import SearchResult


class WhyActions(ExplorerScreen):
    """Take a window's score apart into its tokens' shares, for A and, while one is compared, for B."""

    def action_why(self) -> None:
        question, result, corpus = self.shown_question, self.last_result, self.corpus
        if question is None or result is None or corpus is None:
            self.notify("ask a question first: y takes a hit's score apart into its tokens", timeout=5)
            return
        if self.a.index is None or self.a.corpus is None:
            self.notify("the windows are being cut again: ask once they are ranked", timeout=5)
            return
        row = self._why_row()
        if row is None:
            self.notify("no window to explain: highlight a hit, or open a file's window", timeout=5)
            return
        asks: list[tuple[ConfigurationRun, int, SearchResult | None]] = [(self.a, row, result)]
        b_row = self._b_row_for(row)
        if self.b is not None and b_row is not None:
            ranking = self.versus_ranking
            shown = ranking.result if ranking is not None and ranking.question == question.number else None
            asks.append((self.b, b_row, shown))
        parts, futures = [], []
        for run, run_row, run_result in asks:
            part, future = self._ask_why(run, run_row, run_result, question.text)
            parts.append(part)
            futures.append(future)
        screen = WhyScreen(question.text, parts)
        self.app.push_screen(screen)
        for position, future in enumerate(futures):
            if future is not None:
                self.wait_for_why(screen, position, future)

    def _why_row(self) -> int | None:
        """A's row to explain: the selected window when the window view has the focus, else the hit."""
        focused = self.focused
        in_window_view = focused is not None and any(
            isinstance(node, WindowView) for node in focused.ancestors
        )
        if in_window_view and self.shown_window is not None:
            path, current = self.shown_window
            rows = self.a.file_rows.get(path)
            if rows is not None and current is not None and current < len(rows):
                return rows.start + current
        hit = self.query_one(HitList).highlighted_hit
        if hit is None or hit.row >= len(self.a.windows) or self.a.windows[hit.row] != hit.window:
            return None  # no hit, or hits of a window set cut since (a new ranking is on its way)
        return hit.row

    def _b_row_for(self, a_row: int) -> int | None:
        """B's window over the same text as A's row: the same row for the same windows, else the one of
        the same file that overlaps it most."""
        b = self.b
        if b is None or b.index is None or not b.windows or a_row >= len(self.a.windows):
            return None
        window = self.a.windows[a_row]
        rows = b.file_rows.get(window.path)
        if not rows:
            return None

        def overlap(row: int) -> int:
            other = b.windows[row]
            return min(other.end, window.end) - max(other.start, window.start)

        best = max(rows, key=overlap)
        return best if overlap(best) > 0 else None

    def _ask_why(
        self, run: ConfigurationRun, row: int, result: SearchResult | None, question: str
    ) -> tuple[WhyPart, Future[Attribution] | None]:
        """The panel of ``run``'s window ``row`` and the future of its taking apart (None: no process)."""
        from raglens.attribution import Unexplained
        from raglens.search import score_of  # numpy is loaded once there is a result

        assert run.corpus is not None
        window = run.windows[row]
        text = window.text_in(run.corpus.file(window.path).text)  # the text the run's vectors were made of
        extent = run.index.extent(row) if run.index is not None else None
        if result is not None and not result.is_of(run.windows):
            result = None  # a ranking of another window set: its score is not this window's
        part = WhyPart(
            f"{'A' if run is self.a else 'B'} · {run.model_label()} · {run.config.params.describe()}",
            window.citation,
            score_of(result, row) if result is not None else None,
            text,
            extent.chars_read if extent is not None else None,
            not run.lexical,
        )
        process = run.process
        if process is None:
            return replace(part, attribution=Unexplained("its embedding process is not running")), None
        return part, process.explain(question, text, run.generation, row)

    def wait_for_why(self, screen: WhyScreen, position: int, future: Future[Attribution]) -> None:
        """Fill panel ``position`` once its process answers; each panel waits on its own."""
        self.run_worker(
            functools.partial(self._await_why, screen, position, future),
            thread=True,
            exclusive=True,
            group=f"why-{position}",
            exit_on_error=False,
            description="taking the score apart",
        )

    def _await_why(self, screen: WhyScreen, position: int, future: Future[Attribution]) -> None:
        answer = result_unless_cancelled(future)
        if not get_current_worker().is_cancelled:
            self.post_message(WhyReady(screen, position, answer))

    @while_shown
    def on_why_ready(self, message: WhyReady) -> None:
        if message.screen.is_attached:
            message.screen.show(message.position, message.answer)
