"""The settings screen: window unit, size, overlap and k, validated before they are applied."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Select, Static

from raglens.configuration import parse_k, parse_overlap, parse_size, parse_unit
from raglens.errors import BadInputError
from raglens.ui.screens.form_rows import text_row, unit_row
from raglens.windows import WindowParams


@dataclass(frozen=True)
class Settings:
    """What the user can change inside the app."""

    params: WindowParams
    k: int


def parse_settings(unit: str, size: str, overlap: str, k: str) -> Settings:
    """Settings from the form's text, or a BadInputError with the same message as the CLI's ``--vs``."""
    fields = parse_unit(unit), parse_size(size), parse_overlap(overlap)
    hits = parse_k(k)
    return Settings(WindowParams(*fields), hits)


class SettingsScreen(ModalScreen[Settings | None]):
    """A small form; Apply closes it with the new settings, Escape without."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]
    AUTO_FOCUS = "#settings-size"
    """As the v form: the size is what people change, and digits typed at once land in it."""

    def __init__(self, current: Settings) -> None:
        super().__init__()
        self._current = current

    def compose(self) -> ComposeResult:
        params = self._current.params
        # Each label beside its field, and the title in the border: at 80x24 the whole form fits,
        # where a label above each field overflowed, scrolled to the focused field and hid the title.
        with Vertical(id="settings-box") as box:
            box.border_title = "Window settings"
            yield unit_row("settings-unit", params.unit)
            yield text_row("size", "settings-size", str(params.size))
            yield text_row("overlap", "settings-overlap", str(params.overlap))
            yield text_row("k (hits)", "settings-k", str(self._current.k))
            yield Static("", id="settings-error")
            with Horizontal(id="settings-buttons"):
                yield Button("Apply", variant="primary", id="settings-apply")
                yield Button("Cancel", id="settings-cancel")

    def _form(self) -> tuple[str, str, str, str]:
        unit = self.query_one("#settings-unit", Select).value
        return (
            str(unit),
            self.query_one("#settings-size", Input).value,
            self.query_one("#settings-overlap", Input).value,
            self.query_one("#settings-k", Input).value,
        )

    @on(Button.Pressed, "#settings-apply")
    @on(Input.Submitted)
    def apply(self) -> None:
        try:
            settings = parse_settings(*self._form())
        except BadInputError as error:
            self.query_one("#settings-error", Static).update(Text(str(error), style="bold red"))
            return
        self.dismiss(settings)

    @on(Button.Pressed, "#settings-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
