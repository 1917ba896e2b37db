"""The explorer's ``x`` key: the eval grid over the golden file, run as a child ``raglens eval --grid``
with a progress bar, then its table and chart in a report.

A mixin of the app; the worker only reads the child and posts messages, the handlers own the state.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import App

from raglens.errors import BadInputError
from raglens.printable import printable
from raglens.ui.grid_run import GridChild, grid_command
from raglens.ui.messages import GridDone, GridStepped, while_shown
from raglens.ui.screens.grid import GridRequest, GridRunScreen, GridScreen
from raglens.ui.screens.report import ReportScreen
from raglens.ui.versus_run import config_of

if TYPE_CHECKING:
    from raglens.ui.app_config import AppConfig
    from raglens.windows import WindowParams

REPORT_WIDTH = 110
"""The report box's width (raglens.tcss #report-box); its frame and padding take REPORT_MARGIN."""
REPORT_MARGIN = 8


class GridActions(App[None]):
    """The eval grid from the explorer."""

    config: AppConfig
    params: WindowParams

    def __init__(self) -> None:
        super().__init__()
        self.grid_child: GridChild | None = None
        """The grid running now, if one is."""

    if TYPE_CHECKING:

        def golden_path(self) -> Path: ...
        def _narrate(self, line: str) -> None: ...

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
        base = replace(config_of(self.config), params=self.params)
        self.push_screen(GridScreen(base, str(golden), len(cases)), self._grid_requested)

    def _grid_requested(self, request: GridRequest | None) -> None:
        if request is None:
            return
        config = replace(self.config, params=self.params)
        command = grid_command(config, str(self.golden_path()), request.axes, request.k)
        width = max(min(self.size.width, REPORT_WIDTH) - REPORT_MARGIN, 60)
        child = self.grid_child = GridChild(command, width)
        self._narrate(f"eval grid: {request.count} configuration(s), k={request.k}")
        self.push_screen(GridRunScreen(request.count), self._grid_run_closed)
        self.follow_grid(child)

    def _grid_run_closed(self, _: None) -> None:
        """The progress screen closed: by the user (stop the grid) or because the grid ended."""
        child, self.grid_child = self.grid_child, None
        if child is not None:
            child.stop()
            self._narrate("eval grid stopped")

    @work(thread=True, group="grid", exit_on_error=False, description="eval grid")
    def follow_grid(self, child: GridChild) -> None:
        """Post each configuration the child starts, then its report."""
        for step in child.progress():
            self.post_message(GridStepped(child, step))
        code, out = child.report()
        self.post_message(GridDone(child, code, out, tuple(child.errors[-3:])))

    @while_shown
    def on_grid_stepped(self, message: GridStepped) -> None:
        if message.child is not self.grid_child or not isinstance(self.screen, GridRunScreen):
            return
        step = message.step
        self.screen.show_step(step.number, step.total, step.config, step.seconds_left)

    @while_shown
    def on_grid_done(self, message: GridDone) -> None:
        if message.child is not self.grid_child:
            return  # stopped by the user: its end says nothing new
        self.grid_child = None
        if isinstance(self.screen, GridRunScreen):
            self.screen.dismiss(None)
        if message.code != 0:
            why = "; ".join(message.errors) or f"exit code {message.code}"
            self.notify(
                printable(why), title="the eval grid failed", severity="error", timeout=30, markup=False
            )
            return
        self._narrate("eval grid done")
        self.push_screen(ReportScreen("Eval grid", Text(printable(message.report))))

    def stop_grid(self) -> None:
        """End a running grid with the app."""
        child, self.grid_child = self.grid_child, None
        if child is not None:
            child.stop()
