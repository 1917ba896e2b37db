"""Export the README's screenshot: the explorer on sample_corpus with the real model, as SVG.

Usage: uv run python scripts/screenshot.py [OUT.svg]
"""

from __future__ import annotations

import asyncio
import sys

from textual.widgets import Input, Static

from raglens.run import EngineSettings
from raglens.ui.app import RaglensApp
from raglens.ui.app_config import AppConfig

QUERY = "what happens after a job is acknowledged?"


async def export(path: str) -> None:
    app = RaglensApp(AppConfig(path="sample_corpus", engine=EngineSettings(device="cpu"), show_rates=False))
    async with app.run_test(size=(150, 42)) as pilot:
        app.query_one("#query", Input).cursor_blink = False
        await pilot.click("#query")
        await pilot.press(*QUERY)
        main = app.main
        while not (
            main.last_result is not None
            and main.last_result.ranked_count == main.last_result.window_count
            and main.last_result.hits
            and "noise floor 0" in str(app.query_one("#score-strip", Static).render())
        ):
            await pilot.pause(0.1)
        top = main.last_result.hits[0].window
        main.show_file(top.path, top.index)
        await pilot.pause(0.3)
        app.save_screenshot(path)


if __name__ == "__main__":
    asyncio.run(export(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshot.svg"))
