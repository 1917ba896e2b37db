"""The eval grid from the explorer: a form for the axes, then a progress bar, then the table and chart."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, ProgressBar, Static

from raglens.configuration import (
    GridAxis,
    RetrievalConfig,
    grid_configs,
    parse_grid_axis,
    parse_k,
    split_axes,
)
from raglens.display import duration
from raglens.errors import BadInputError
from raglens.printable import printable_name
from raglens.ui.screens.form_rows import text_row

DEFAULT_AXES = "size=600,800,1000 overlap=0,100,200"


@dataclass(frozen=True)
class GridRequest:
    """The axes and k the form was run with."""

    axes: tuple[GridAxis, ...]
    k: int
    count: int
    """How many configurations that is."""


def parse_request(axes_text: str, k_text: str, base: RetrievalConfig) -> GridRequest:
    """The form's text as a request; a BadInputError says what is wrong, as the CLI would."""
    specs = split_axes(axes_text)
    if not specs:
        raise BadInputError("name at least one axis, such as size=600,800,1000")
    axes = tuple(parse_grid_axis(spec) for spec in specs)
    k = parse_k(k_text)
    return GridRequest(axes, k, len(grid_configs(base, axes)))


class GridScreen(ModalScreen[GridRequest | None]):
    """Which parameters to vary; Run checks every combination before anything starts."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]
    AUTO_FOCUS = "#grid-axes"

    def __init__(self, base: RetrievalConfig, golden: str, cases: int) -> None:
        super().__init__()
        self._base = base
        self._golden = golden
        self._cases = cases

    def compose(self) -> ComposeResult:
        with Vertical(id="grid-box") as box:
            box.border_title = "Eval grid"
            yield Static(
                Text(printable_name(f"{self._cases} case(s) from {self._golden}"), style="dim"),
                id="grid-golden",
            )
            yield text_row("vary", "grid-axes", DEFAULT_AXES)
            yield text_row("k", "grid-k", "8")
            yield Static(
                Text(
                    "keys: unit, size, overlap, model, max_seq_length, precision; axes apart by spaces",
                    style="dim",
                )
            )
            yield Static("", id="grid-error")
            with Horizontal(id="settings-buttons"):
                yield Button("Run", variant="primary", id="grid-run")
                yield Button("Cancel", id="grid-cancel")

    @on(Button.Pressed, "#grid-run")
    @on(Input.Submitted)
    def run(self) -> None:
        try:
            request = parse_request(
                self.query_one("#grid-axes", Input).value, self.query_one("#grid-k", Input).value, self._base
            )
        except BadInputError as error:
            self.query_one("#grid-error", Static).update(Text(str(error), style="bold red"))
            return
        self.dismiss(request)

    @on(Button.Pressed, "#grid-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class GridRunScreen(ModalScreen[None]):
    """The grid's progress over every configuration; escape stops it."""

    BINDINGS = [Binding("escape", "stop", "stop")]

    def __init__(self, total: int) -> None:
        super().__init__()
        self._total = total

    def compose(self) -> ComposeResult:
        with Vertical(id="grid-box") as box:
            box.border_title = "Eval grid"
            yield Static(Text(f"starting {self._total} configuration(s)…"), id="grid-step")
            yield ProgressBar(total=self._total, show_eta=False, id="grid-progress")
            yield Static(Text("escape stops the grid", style="dim"))

    def show_step(self, number: int, total: int, config: str, seconds_left: int | None) -> None:
        left = "" if seconds_left is None else f" · about {duration(seconds_left)} left"
        self.query_one("#grid-step", Static).update(Text(printable_name(f"{number}/{total}: {config}{left}")))
        self.query_one("#grid-progress", ProgressBar).update(total=total, progress=number - 1)

    def show_done(self, number: int, total: int) -> None:
        """Configuration ``number`` of ``total`` was evaluated."""
        self.query_one("#grid-progress", ProgressBar).update(total=total, progress=number)

    def action_stop(self) -> None:
        self.dismiss(None)
