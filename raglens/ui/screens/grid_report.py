"""The eval grid's report, and its questions to open: choosing one asks it with its answer pinned."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from raglens.grid_events import GridCase
from raglens.printable import printable


def case_label(case: GridCase) -> Text:
    """``line 3  is SHA-1 safe…   #1 3 ▼ · #2 miss ▼ · #3 1``: the question and its rank in each row."""
    label = Text(f"line {case.line}  ", style="dim")
    label.append(printable(case.query))
    label.append(
        "   " + " · ".join(f"#{number} {cell}" for number, cell in enumerate(case.cells, 1)), style="cyan"
    )
    return label


class GridReportScreen(ModalScreen[GridCase | None]):
    """The grid's table and chart, then every answerable question: enter opens the highlighted one in
    the explorer with its expected answer pinned, to see why it moved; escape or q closes."""

    BINDINGS = [Binding("escape,q", "close", "close")]

    def __init__(self, report: Text, cases: Sequence[GridCase]) -> None:
        super().__init__()
        self._report = report
        self._cases = list(cases)

    @property
    def cases(self) -> tuple[GridCase, ...]:
        """The questions offered, in the order listed."""
        return tuple(self._cases)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="report-box"):
            yield Static(Text("Eval grid", style="bold"), id="report-title")
            yield Static(self._report, id="report-body")
            if self._cases:
                yield Static(
                    Text(
                        "tab to a question, enter asks it with its expected answer pinned and opens the "
                        "row it is compared with as B",
                        style="bold",
                    ),
                    id="grid-cases-title",
                )
                yield OptionList(*(Option(case_label(case)) for case in self._cases), id="grid-cases")

    @on(OptionList.OptionSelected, "#grid-cases")
    def case_chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self._cases[event.option_index])

    def action_close(self) -> None:
        self.dismiss(None)
