"""Text laid out for the width being measured: the base of widgets whose lines depend on their width."""

from __future__ import annotations

from rich.text import Text
from textual.geometry import Size
from textual.widgets import Static


class FittedText(Static):
    """A Static whose text is built for a width, in ``get_content_height`` and ``render`` alike.

    A widget that drew its text for its old width and then resized had its height computed for the
    old text now and then: rows of blank space, or a finding cut off.
    """

    def text_for(self, width: int | None) -> Text:
        """The text to show in ``width`` columns (None: not laid out yet); empty hides nothing."""
        raise NotImplementedError

    def render(self) -> Text:
        return self.text_for(self.size.width or None)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if not width:
            return 0
        text = self.text_for(width)
        return len(text.wrap(self.app.console, width)) if text else 0
