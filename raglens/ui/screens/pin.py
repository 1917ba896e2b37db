"""Choose what should answer the current query: the hit's file, or a symbol its window holds."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from raglens.printable import printable, printable_name


class PinScreen(ModalScreen[str | None]):
    """A list of ``path`` and ``path::symbol`` choices; picking one closes it with that ref."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, query: str, choices: list[str]) -> None:
        super().__init__()
        self._query = query
        self._choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(id="pin-box"):
            yield Static(Text.assemble(("Expected answer for ", "bold"), printable(self._query)))
            yield Static(
                Text("its rank is shown for every ranking; g saves the case to the golden file", style="dim")
            )
            options = [Option(printable_name(choice), id=str(n)) for n, choice in enumerate(self._choices)]
            yield OptionList(*options)

    @on(OptionList.OptionSelected)
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self._choices[int(event.option.id or 0)])

    def action_cancel(self) -> None:
        self.dismiss(None)
