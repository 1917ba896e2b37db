"""The explorer's ``x`` key: the eval grid over the golden file, run as a child ``raglens eval --grid
--events`` with a progress bar, then its table and chart in a report.

A mixin of the app; the worker only reads the child and posts its events, the handler owns the state.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.message import Message

from raglens.configuration import RetrievalConfig, grid_configs
from raglens.errors import BadInputError
from raglens.grid_events import GridCase, GridEvent, GridFailed, GridFinished, GridRowDone, GridStarted
from raglens.printable import printable
from raglens.ui.explorer_screen import ExplorerScreen
from raglens.ui.grid_run import GridChild, grid_command
from raglens.ui.messages import while_shown
from raglens.ui.screens.grid import GridRequest, GridRunScreen, GridScreen
from raglens.ui.screens.grid_report import GridReportScreen

if sys.version_info >= (3, 11):
    from typing import assert_never
else:  # textual depends on typing_extensions
    from typing_extensions import assert_never

if TYPE_CHECKING:
    from raglens.embedding_process import EmbeddingProcess
    from raglens.ui.app_config import AppConfig

REPORT_WIDTH = 110
"""The report box's width (raglens.tcss #report-box); its frame and padding take REPORT_MARGIN."""
REPORT_MARGIN = 8


@dataclass
class GridEventArrived(Message):
    """The grid's child sent an event (or ended without its last one, and ``events`` made it up)."""

    child: GridChild
    event: GridEvent


def row_to_compare(
    rows: Sequence[RetrievalConfig], best: int | None, case: GridCase, a: RetrievalConfig
) -> RetrievalConfig | None:
    """The grid row to open as B for ``case``: the best row, or, when A is the best, the first row where
    the case's rank differs from the best's (its cell marked ▲ or ▼); None when there is none."""
    if best is None or not 0 <= best < len(rows):
        return None
    if rows[best] != a:
        return rows[best]
    moved = [n for n, cell in enumerate(case.cells) if n != best and ("▲" in cell or "▼" in cell)]
    return rows[moved[0]] if moved and moved[0] < len(rows) else None


class GridActions(ExplorerScreen):
    """The eval grid from the explorer."""

    def __init__(self, config: AppConfig, process: EmbeddingProcess | None = None) -> None:
        super().__init__(config, process)
        self.grid_child: GridChild | None = None
        """The grid running now, if one is."""
        self.grid_rows: tuple[RetrievalConfig, ...] = ()
        """The configurations of the last grid run, in its rows' order."""
        self.grid_best: int | None = None
        """The last grid's best row, once it finished (None: none found anything)."""

    def action_eval_grid(self) -> None:
        """Ask which parameters to vary, then evaluate every combination on the golden file."""
        from raglens.diagnostics.golden import read_golden

        if self.grid_child is not None:
            self.notify("an eval grid is running already", timeout=4)
            return
        golden = self.golden_path()
        try:
            cases = read_golden(golden)
        except BadInputError as error:
            self.notify(
                f"{error}; save cases with g (pin answers with a), or start raglens with --golden FILE",
                title="no golden set",
                severity="warning",
                timeout=10,
                markup=False,
            )
            return
        self.app.push_screen(GridScreen(self.a.config, str(golden), len(cases)), self._grid_requested)

    def _grid_requested(self, request: GridRequest | None) -> None:
        if request is None:
            return
        command = grid_command(self.config, self.a.config, str(self.golden_path()), request.axes, request.k)
        self.grid_rows, self.grid_best = tuple(grid_configs(self.a.config, request.axes)), None
        width = max(min(self.size.width, REPORT_WIDTH) - REPORT_MARGIN, 60)
        child = self.grid_child = GridChild(command, width)
        self.narrate(f"eval grid: {request.count} configuration(s), k={request.k}")
        self.app.push_screen(GridRunScreen(request.count), self._grid_run_closed)
        self.follow_grid(child)

    def _grid_run_closed(self, _: None) -> None:
        """The progress screen closed: by the user (stop the grid) or because the grid ended."""
        child, self.grid_child = self.grid_child, None
        if child is not None:
            child.stop()
            self.narrate("eval grid stopped")

    @work(thread=True, group="grid", exit_on_error=False, description="eval grid")
    def follow_grid(self, child: GridChild) -> None:
        """Post each event of the child's, its last one included."""
        for event in child.events():
            self.post_message(GridEventArrived(child, event))

    @while_shown
    def on_grid_event_arrived(self, message: GridEventArrived) -> None:
        """Move the progress on, or end the grid with its report or its failure."""
        if message.child is not self.grid_child:
            return  # stopped by the user: what it says now changes nothing
        event = message.event
        match event:
            case GridStarted(number=number, total=total, config=config, seconds_left=seconds_left):
                if isinstance(self.app.screen, GridRunScreen):
                    self.app.screen.show_step(number, total, config, seconds_left)
            case GridRowDone(number=number, total=total):
                if isinstance(self.app.screen, GridRunScreen):
                    self.app.screen.show_done(number, total)
            case GridFinished(report=report, cases=cases, best=best):
                self.grid_best = best
                self._grid_ended()
                self.narrate("eval grid done")
                self.app.push_screen(GridReportScreen(Text(printable(report)), cases), self._grid_case_chosen)
            case GridFailed(message=why):
                self._grid_ended()
                self.notify(
                    printable(why), title="the eval grid failed", severity="error", timeout=30, markup=False
                )
            case _:
                assert_never(event)

    def _grid_case_chosen(self, case: GridCase | None) -> None:
        """Ask the case's question with its answer pinned, and open as B the row it is compared with,
        so B's boundaries lie over A's and the move can be seen."""
        if case is None:
            return
        self.open_case(case.query, case.expect)
        row = row_to_compare(self.grid_rows, self.grid_best, case, self.a.config)
        if row is None:
            return
        if self.b is None or self.b.config != row:
            self.start_versus(row)
        self.notify(
            printable(f"B is {row.describe()}, the grid's row to compare this question with"),
            timeout=6,
            markup=False,
        )

    def _grid_ended(self) -> None:
        """The grid ended by itself: forget it and close its progress screen."""
        self.grid_child = None
        if isinstance(self.app.screen, GridRunScreen):
            self.app.screen.dismiss(None)

    def stop_grid(self) -> None:
        """End a running grid with the app."""
        child, self.grid_child = self.grid_child, None
        if child is not None:
            child.stop()
