"""FittedText: its height is always what its text needs, and a new text of the same height is only
repainted, not laid out (a layout reflows the whole screen)."""

from __future__ import annotations

import random

from rich.console import Console
from rich.text import Text
from textual.app import App, ComposeResult

from raglens.ui.widgets.fitted_text import FittedText

WIDTH = 30


class Lines(FittedText[str]):
    def text_for(self, width: int | None) -> Text:
        return Text(self.source or "")


class OneWidget(App[None]):
    CSS = f"Lines {{ width: {WIDTH}; height: auto; }}"

    def compose(self) -> ComposeResult:
        yield Lines(id="lines")


def rows_needed(text: str) -> int:
    return len(Text(text).wrap(Console(width=200), WIDTH)) if text else 0


async def test_a_text_of_the_same_height_is_repainted_and_another_height_laid_out() -> None:
    app = OneWidget()
    async with app.run_test(size=(80, 24)) as pilot:
        lines = app.query_one(Lines)
        layouts: list[bool] = []
        refresh = lines.refresh

        def recording_refresh(*regions, repaint=True, layout=False, recompose=False):  # type: ignore[no-untyped-def]
            layouts.append(layout)
            return refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

        lines.refresh = recording_refresh  # type: ignore[method-assign]
        lines.present("embedded 10 of 100")
        await pilot.pause()
        assert layouts[-1] is True, "the first text is laid out"
        assert lines.size.height == 1

        lines.present("embedded 20 of 100")
        await pilot.pause()
        assert layouts[-1] is False, "the same height: repainted only"
        assert str(lines.render()) == "embedded 20 of 100"

        lines.present("embedded 30 of 100, and a word too many to fit in one row")
        await pilot.pause()
        assert layouts[-1] is True, "a second row: laid out"
        assert lines.size.height == 2

        lines.clear()
        await pilot.pause()
        lines.present("embedded 40 of 100")
        await pilot.pause()
        assert layouts[-1] is True, "shown again after being hidden: laid out"
        assert lines.size.height == 1


async def test_the_height_follows_every_text_in_a_random_sequence() -> None:
    """The oracle: after each text, the widget is exactly as tall as the text wrapped to its width."""
    chooser = random.Random(29)
    words = ["embedded", "1,613", "windows", "of", "a", "rate", "12.5/s", "left", "~3 min", "loading"]
    app = OneWidget()
    async with app.run_test(size=(80, 24)) as pilot:
        lines = app.query_one(Lines)
        for _ in range(40):
            text = " ".join(chooser.choice(words) for _ in range(chooser.randint(0, 14)))
            lines.present(text)
            await pilot.pause()
            assert lines.size.height == rows_needed(text), text
