"""The ``v`` screen: configuration B — window unit, size, overlap, model and token limit — beside A."""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Select, Static

from raglens.configuration import RetrievalConfig, config_from_fields
from raglens.errors import BadInputError
from raglens.ui.screens.form_rows import text_row, unit_row


@dataclass(frozen=True)
class VersusChoice:
    """What the form closed with: a configuration B, or None to stop comparing."""

    config: RetrievalConfig | None


class VersusScreen(ModalScreen[VersusChoice | None]):
    """A form prefilled with B (or A, the first time); Compare applies it, Escape leaves things be."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]
    AUTO_FOCUS = "#versus-size"
    """The size is what B most often changes: the form opens on it, its value selected to type over."""

    def __init__(self, a: RetrievalConfig, current: RetrievalConfig | None) -> None:
        super().__init__()
        self._a = a
        self._current = current

    def compose(self) -> ComposeResult:
        shown = self._current or self._a
        params = shown.params
        with Vertical(id="versus-box") as box:
            box.border_title = "Compare with configuration B"
            yield Static(Text("A: " + self._a.describe(), style="dim"), id="versus-a")
            yield unit_row("versus-unit", params.unit)
            yield text_row("size", "versus-size", str(params.size))
            yield text_row("overlap", "versus-overlap", str(params.overlap))
            yield text_row("model", "versus-model", shown.model or "", "the bundled all-MiniLM-L6-v2")
            tokens = "" if shown.max_seq_length is None else str(shown.max_seq_length)
            yield text_row("tokens", "versus-tokens", tokens, "the model's own (MiniLM: 256, up to 512)")
            yield Static("", id="versus-error")
            with Horizontal(id="settings-buttons"):
                yield Button("Compare", variant="primary", id="versus-apply")
                if self._current is not None:
                    yield Button("Stop comparing", id="versus-stop")
                yield Button("Cancel", id="versus-cancel")

    def _config(self) -> RetrievalConfig:
        """B from the fields, each parsed as the CLI's ``--vs`` parses it; precision is A's.

        An empty model or token limit is what its placeholder says (the bundled model, the model's
        own limit), not A's.
        """
        fields = {
            "unit": str(self.query_one("#versus-unit", Select).value),
            "size": self.query_one("#versus-size", Input).value,
            "overlap": self.query_one("#versus-overlap", Input).value,
        }
        for key, field_id in (("model", "#versus-model"), ("max_seq_length", "#versus-tokens")):
            text = self.query_one(field_id, Input).value
            if text.strip():
                fields[key] = text
        return config_from_fields(replace(self._a, model=None, max_seq_length=None), fields)

    @on(Button.Pressed, "#versus-apply")
    @on(Input.Submitted)
    def apply(self) -> None:
        try:
            config = self._config()
        except BadInputError as error:
            self.query_one("#versus-error", Static).update(Text(str(error), style="bold red"))
            return
        if config == self._a:
            self.query_one("#versus-error", Static).update(
                Text(
                    "B is the same as A: change a window setting, the model or its token limit",
                    style="bold red",
                )
            )
            return
        self.dismiss(VersusChoice(config))

    @on(Button.Pressed, "#versus-stop")
    def stop(self) -> None:
        self.dismiss(VersusChoice(None))

    @on(Button.Pressed, "#versus-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
