"""Save the question as a golden case: see the line that will be written, choose its kind."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from raglens.diagnostics.golden import CASE_KINDS, NEGATIVE_KINDS
from raglens.printable import printable, printable_name

KIND_NOTES = {
    "identifier": "a name in the code, asked as itself",
    "prose": "a question in words the model reads",
    "other-language": "a question in a language the model does not read",
    "unanswerable": "nothing in this corpus answers it",
}


class SaveCaseScreen(ModalScreen[str | None]):
    """The case to append and a list of kinds, the likely one first; choosing one closes with it."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, query: str, refs: tuple[str, ...], target: str, suggested: str) -> None:
        super().__init__()
        self._query = query
        self._refs = refs
        self._target = target
        offered = NEGATIVE_KINDS if not refs else tuple(k for k in CASE_KINDS if k not in ("unanswerable",))
        self._kinds = (suggested, *(kind for kind in offered if kind != suggested))

    def compose(self) -> ComposeResult:
        with Vertical(id="save-case-box"):
            yield Static(Text.assemble(("Save to the golden set: ", "bold"), printable(self._query)))
            expect = (
                "expects " + ", ".join(printable_name(ref) for ref in self._refs)
                if self._refs
                else "expects nothing: a negative case (no window should answer it)"
            )
            yield Static(Text(expect))
            yield Static(Text(printable_name(f"appended to {self._target}; choose its kind"), style="dim"))
            yield OptionList(
                *(
                    Option(Text.assemble((kind, "bold"), (f"  {KIND_NOTES[kind]}", "dim")), id=kind)
                    for kind in self._kinds
                )
            )

    @on(OptionList.OptionSelected)
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
