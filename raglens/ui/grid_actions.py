"""The explorer's ``x`` key: the eval grid over the golden file, run as a child ``raglens eval --grid
--events`` with a progress bar, then its table and chart in a report.

A mixin of the app; the worker only reads the child and posts its events, the handler owns the state.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.message import Message

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


class GridActions(ExplorerScreen):
    """The eval grid from the explorer."""

    def __init__(self, config: AppConfig, process: EmbeddingProcess | None = None) -> None:
        super().__init__(config, process)
        self.grid_child: GridChild | None = None
        """The grid running now, if one is."""

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
            case GridFinished(report=report, cases=cases):
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
        if case is not None:
            self.open_case(case.query, case.expect)

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
