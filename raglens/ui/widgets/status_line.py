"""The status line: model, windows and progress, fitted to its width by leaving out the least useful."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text

from raglens.ui.widgets.fitted_text import FittedText

StatusSource = Callable[[int | None], Text]
"""The status text for a width (None: not laid out yet)."""


class StatusLine(FittedText[StatusSource]):
    """One line; its words are chosen for the width it has (see :func:`raglens.ui.status.status_text`)."""

    def text_for(self, width: int | None) -> Text:
        return self.source(width) if self.source is not None else Text()
