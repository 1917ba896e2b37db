"""The command palette's "Open <file>" commands: matched as the user types, never listed whole.

Listing one command per file when the palette opened took 0.8 s at 10,948 files, and grew with the
corpus; a search yields only the files whose names match, and hands the event loop back as it goes.
"""

from __future__ import annotations

import asyncio
import functools

from textual.command import Hit, Hits, Provider
from textual.markup import escape as escape_markup

from raglens.printable import printable_name

YIELD_EVERY = 500
"""Files matched between two returns to the event loop, which keeps drawing while a search runs."""
MOST_SHOWN = 50
"""The best matches offered: the palette laid out every match, 20k of them for "Open" at 20k files."""


class FileCommands(Provider):
    """Open any file of the corpus in the window view."""

    async def search(self, query: str) -> Hits:
        from raglens.ui.screens.main import MainScreen

        screens = [screen for screen in self.app.screen_stack if isinstance(screen, MainScreen)]
        corpus = screens[0].corpus if screens else None
        if corpus is None:
            return
        main = screens[0]
        matcher = self.matcher(query)
        found: list[tuple[float, str, str]] = []
        for position, source in enumerate(corpus.files):
            if position % YIELD_EVERY == YIELD_EVERY - 1:
                await asyncio.sleep(0)
            # The palette reads a title as markup: a file named [x=1:2].md crashed it, and one named
            # [@click=app.quit]x.md became a link that quit the app.
            title = f"Open {escape_markup(printable_name(source.path))}"
            score = matcher.match(title)
            if score > 0:
                found.append((score, title, source.path))
        found.sort(key=lambda match: -match[0])
        for score, title, path in found[:MOST_SHOWN]:
            yield Hit(
                score,
                matcher.highlight(title),
                functools.partial(main.show_file, path, 0),
                text=f"Open {printable_name(path)}",
                help="Show this file's windows",
            )
