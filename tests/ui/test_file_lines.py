"""The file view's scroll: brought to a line as the file is shown, it ends where the laid-out view
lets it, whatever the scrollbars the new rows bring."""

from __future__ import annotations

from textual.app import App, ComposeResult

from raglens.ui.widgets.file_lines import FileLines
from raglens.window_layout import FileLayout
from raglens.windows import WindowParams, cut_windows
from tests.ui.conftest import wait_until


class ViewApp(App[None]):
    """The file view alone, in a pane too narrow for the file's longest line."""

    CSS = "FileLines { width: 40; height: 12; }"

    def compose(self) -> ComposeResult:
        yield FileLines()


async def test_a_line_near_the_end_scrolled_to_as_the_file_is_shown_ends_at_the_bottom() -> None:
    """Scrolled in the turn the rows were set, the view took its height before the horizontal
    scrollbar (a line wider than the pane) took a row of it: it stopped a row short of the end, and
    stayed there (a snapshot saw line 14 at the top one run, line 15 the next)."""
    text = "".join(f"line {number}\n" for number in range(1, 40)) + "x" * 200 + "\n"
    layout = FileLayout(text, cut_windows("f.py", text, WindowParams()))
    app = ViewApp()
    async with app.run_test() as pilot:
        view = app.query_one(FileLines)
        view.show_layout(layout, wrap=False)
        view.scroll_to_line(38)
        await wait_until(pilot, lambda: view.show_horizontal_scrollbar, "the horizontal scrollbar")
        await pilot.pause()
        assert view.max_scroll_y > 0
        assert view.scroll_y == view.max_scroll_y, "the view stopped short of the file's end"
        assert view.line_at_top() == view.max_scroll_y + 1
