"""The pipeline log: what raglens did, one line per step, wrapped to the pane's width."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.widgets import RichLog

from raglens.printable import printable_name

MAX_ENTRIES = 500


class PipelineLog(RichLog):
    """A log that wraps every entry to its own width and wraps them again when that width changes.

    A plain RichLog lays lines out for at least 78 columns and never again, so in a 30-column pane
    the end of each finding (``-> the model cuts 35 of 66 wi``) was cut off.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, wrap=True, markup=False, max_lines=MAX_ENTRIES * 4, min_width=1)
        self._entries: list[Text] = []
        self._wrapped_at = 0

    @property
    def entries(self) -> list[str]:
        """Every line narrated so far, unwrapped, oldest first."""
        return [entry.plain for entry in self._entries]

    def narrate(self, line: str) -> None:
        """Add ``line`` (any text: it is made printable) as a new entry."""
        entry = Text(f"-> {printable_name(line)}")
        self._entries = [*self._entries[-(MAX_ENTRIES - 1) :], entry]
        self.write(entry)

    def on_resize(self, event: events.Resize) -> None:
        width = self.scrollable_content_region.width
        if width == self._wrapped_at or not self._entries:
            self._wrapped_at = width
            return
        self._wrapped_at = width
        self.clear()
        for entry in self._entries:
            self.write(entry)
