"""Text laid out for the width being measured: the base of widgets whose lines depend on their width."""

from __future__ import annotations

from typing import Generic, TypeVar

from rich.text import Text
from textual.geometry import Size
from textual.widgets import Static

ContentT = TypeVar("ContentT")


class FittedText(Static, Generic[ContentT]):
    """A Static whose text is built for a width, in ``get_content_height`` and ``render`` alike, from
    the source it was given; hidden while it has none.

    A widget that drew its text for its old width and then resized had its height computed for the
    old text now and then: rows of blank space, or a finding cut off.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.source: ContentT | None = None
        """What the text is made from; None while there is nothing to show."""

    def present(self, source: ContentT) -> None:
        """Show ``source``, laid out at the next layout."""
        self.source = source
        self.display = True
        self.refresh(layout=True)

    def clear(self) -> None:
        """Show nothing, and take no room."""
        self.source = None
        self.display = False
        self.refresh(layout=True)

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
