"""A modal page of text: the failure lab's findings, or the prompt an LLM would be sent."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


class ReportScreen(ModalScreen[None]):
    """A titled, scrollable report; escape or q closes it."""

    BINDINGS = [Binding("escape,q", "close", "close")]

    def __init__(self, title: str, body: Text) -> None:
        super().__init__()
        self._title = title
        self._body = body

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="report-box"):
            yield Static(Text(self._title, style="bold"), id="report-title")
            yield Static(self._body, id="report-body")

    def action_close(self) -> None:
        self.dismiss(None)


class LogReportScreen(ReportScreen):
    """The pipeline log over the panes of a narrow screen: ``l`` closes it as it opened it, and it
    opens at its newest lines (a newcomer pressed ``l`` to hide it, and found it opened at the top)."""

    BINDINGS = [Binding("l", "close", "close", show=False)]

    def on_mount(self) -> None:
        box = self.query_one("#report-box", VerticalScroll)
        self.call_after_refresh(box.scroll_end, animate=False)
