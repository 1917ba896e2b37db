"""The explorer on a hostile corpus: every skip shown with its reason, and file content drawn inert."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Static

from raglens.ui.widgets.corpus_tree import CorpusTree
from raglens.ui.widgets.file_lines import FileLines
from tests.hostile import INDEXED, build_hostile_corpus
from tests.ui.conftest import fully_ranked, hit_texts, index_complete, make_app, wait_until

_TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def assert_inert(text: str, what: str) -> None:
    found = _TERMINAL_CONTROLS.search(text)
    assert found is None, f"{what} shows a raw control character {found.group()!r}"


async def test_the_app_survives_a_hostile_corpus_and_shows_it_inert(tmp_path: Path) -> None:
    root, outside = tmp_path / "hostile", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    expected = build_hostile_corpus(root, outside)

    def tree_state() -> dict[str, tuple[int, int]]:
        return {str(p.relative_to(root)): (p.lstat().st_size, p.lstat().st_mtime_ns) for p in root.rglob("*")}

    before = tree_state()
    app = make_app(path=str(root), query="clear the screen, set the title, ring the bell", k=50)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: index_complete(app), "the index")
        await wait_until(pilot, lambda: app.query_one(CorpusTree).is_filled, "the corpus pane filled")
        labels = {}
        for node in app.query_one(CorpusTree).root.children:
            stack = [node]
            while stack:
                current = stack.pop()
                stack.extend(current.children)
                if current.data is not None:
                    labels[current.data.path] = current.label.plain
        for path, outcome in expected.items():
            assert path in labels, f"{path} is missing from the corpus pane"
            if outcome != INDEXED:
                assert outcome in labels[path], f"{path} does not say it is {outcome}"
            assert_inert(labels[path], f"the label of {path}")
        app.main.show_file("terminal_attack.md", 0)
        await pilot.pause()
        lines = app.query_one(FileLines)
        layout = lines.layout_shown
        assert layout is not None
        shown = [lines.shown_text(number) for number in range(1, layout.line_count + 1)]
        assert any("␛]52;c;" in line for line in shown), "the clipboard write is visible as text"
        assert any("[bold red]markup[/]" in line for line in shown), "Rich markup is shown literally"
        for line in shown:
            assert_inert(line, "the window view")
        await wait_until(pilot, lambda: fully_ranked(app, 50), "hits over every window")
        texts = hit_texts(app)
        assert any("␛[2J" in text for text in texts), "the attack file is among the hits, escaped"
        for text in texts:
            assert_inert(text, "a hit")
        assert_inert(str(app.query_one("#score-strip", Static).render()), "the score strip")
        skipped = next(entry for entry in expected if expected[entry] == "too large")
        app.main.post_message(CorpusTree.SkippedFileSelected(skipped, "too large: 31.5 MB"))
        await wait_until(pilot, lambda: "too large" in lines.shown_text(1), "the reason it is skipped")
    assert tree_state() == before, "the app wrote inside the corpus"


HOSTILE_NAMES = ["[x=1:2].md", "[slug].md", "[bold red]x.md", "[@click=app.quit]CLICK.md", "two\nlines.md"]


def palette_titles(app: App[None]) -> list[str]:
    """The titles the command palette offers now (none while it is not open)."""
    from textual.widgets import OptionList

    options = app.screen.query(OptionList)
    if not options:
        return []
    shown = options.first()
    return [str(shown.get_option_at_index(i).prompt) for i in range(shown.option_count)]


async def test_file_names_in_the_command_palette_are_shown_as_text(tmp_path: Path) -> None:
    """A name is never markup: [x=1:2].md crashed the palette, [@click=app.quit]… became a quit link."""
    from textual.command import CommandPalette

    for name in HOSTILE_NAMES:
        (tmp_path / name).write_text(f"notes in {name!r}\n", encoding="utf-8")
    app = make_app(path=str(tmp_path))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.main.corpus is not None, "the corpus")
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"Open")

        await wait_until(
            pilot, lambda: len([t for t in palette_titles(app) if t.startswith("Open ")]) >= 5, "the files"
        )
        shown = "\n".join(palette_titles(app))
        for name in HOSTILE_NAMES:
            assert f"Open {name.replace(chr(10), chr(0x240A))}" in shown, f"{name!r} not shown as text"
        assert app.is_running


async def test_every_pane_shows_hostile_names_inert_on_one_line(tmp_path: Path) -> None:
    """The corpus pane, the window header, each hit's citation and the log, with names built to attack."""
    import os

    from textual.widgets import RichLog

    from raglens.printable import printable_name
    from tests.integration.test_hostile_names import HOSTILE_NAMES

    for number, raw in enumerate(HOSTILE_NAMES):
        (tmp_path / os.fsdecode(raw)).write_text(
            f"note {number} of the lighthouse keeper\n", encoding="utf-8"
        )
    names = [os.fsdecode(raw) for raw in HOSTILE_NAMES]
    app = make_app(path=str(tmp_path), query="lighthouse keeper", k=len(names))
    async with app.run_test(size=(200, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, len(names)), "hits over every window")
        await wait_until(pilot, lambda: app.query_one(CorpusTree).is_filled, "the corpus pane filled")
        labels = [node.label.plain for node in app.query_one(CorpusTree).root.children]
        texts = hit_texts(app)
        for name in names:
            shown = printable_name(name)
            assert "\n" not in shown
            assert any(label.startswith(shown + "  ") for label in labels), (
                f"the corpus pane does not show {name!r} as {shown!r}"
            )
            assert sum(shown + ":L1-L1" in text for text in texts) == 1, f"no hit cites {shown!r}"
            app.main.show_file(name, 0)
            await pilot.pause()
            header = str(app.query_one("#window-header", Static).render())
            assert header.splitlines()[0].startswith(shown), f"the window header of {name!r}"
            assert_inert(header, "the window header")
        for text in [*labels, *texts]:
            assert_inert(text, "a label or hit")
        for line in app.query_one("#pipeline-log", RichLog).lines:
            assert_inert(line.text, "the log")


async def test_the_palette_lists_files_only_as_they_match_and_only_the_best(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listing every file when the palette opened took 1.2 s at 20k files; typing laid out every match."""
    from textual.command import CommandPalette

    from raglens.ui import file_commands

    monkeypatch.setattr(file_commands, "MOST_SHOWN", 2)
    for name in ("alpha.md", "alphabet.md", "alpine.md", "beta.md"):
        (tmp_path / name).write_text(f"notes in {name}\n", encoding="utf-8")
    app = make_app(path=str(tmp_path))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.main.corpus is not None, "the corpus")
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")

        await pilot.pause()
        assert not [t for t in palette_titles(app) if t.startswith("Open ")], (
            "no file is listed before a search"
        )
        await pilot.press(*"Open alph")
        await wait_until(
            pilot, lambda: any(t.startswith("Open ") for t in palette_titles(app)), "the matching files"
        )
        await pilot.pause()
        opened = [t for t in palette_titles(app) if t.startswith("Open ")]
        assert len(opened) == 2 and all("alp" in t for t in opened), opened
