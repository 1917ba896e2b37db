"""Golden cases made in the explorer: a pin belongs to its question, g and N never write a case twice."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Input, OptionList

from raglens.ui.screens.pin import PinScreen
from raglens.ui.screens.save_case import SaveCaseScreen
from raglens.ui.widgets.hit_list import HitList
from raglens.ui.widgets.score_strip import ScoreStrip
from tests.ui.conftest import (
    fully_ranked,
    make_app,
    notification_recorder,
    screen_shown,
    wait_until,
)

QUERY = "how are failed jobs retried with backoff"
OTHER = "where is the lease renewed"


def strip_text(app) -> str:  # type: ignore[no-untyped-def]
    return str(app.query_one(ScoreStrip).render())


async def ask(pilot, app, question: str) -> None:  # type: ignore[no-untyped-def]
    """Type ``question`` into the box and wait until its hits over the whole index are drawn."""
    app.query_one("#query", Input).value = question
    await pilot.press("enter")
    await wait_until(
        pilot, lambda: fully_ranked(app, 5) and app.main.shown_query == question, f"the hits of {question!r}"
    )


async def pin_first_hit(pilot, app) -> str:  # type: ignore[no-untyped-def]
    """Pin the top hit's whole file as the answer; return its path."""
    app.main.action_focus_hits()
    await pilot.pause()
    hit = app.query_one(HitList).highlighted_hit
    assert hit is not None
    await pilot.press("a")
    await wait_until(pilot, lambda: screen_shown(app, PinScreen, "OptionList:focus"), "the pin choices")
    await pilot.press("enter")
    await wait_until(pilot, lambda: f"expected {hit.window.path}: rank" in strip_text(app), "the pin's rank")
    return hit.window.path


async def test_a_pin_stays_with_its_question_and_g_refuses_another(tmp_path: Path) -> None:
    golden = tmp_path / "cases.jsonl"
    app = make_app(query=QUERY, golden_path=str(golden))
    notices, record = notification_recorder()
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "the hits")
        path = await pin_first_hit(pilot, app)
        await ask(pilot, app, OTHER)
        await wait_until(pilot, lambda: "pinned for:" in strip_text(app), "the pins' own question")
        assert f"expected {path}" not in strip_text(app), "another question's label is not ranked here"
        assert app.main.last_diagnostics is not None and app.main.last_diagnostics.expected == ()
        app.main.action_leave_query()
        await pilot.press("g")
        await wait_until(pilot, lambda: any("not this question" in n.message for n in notices), "the refusal")
        assert not golden.exists() and not isinstance(app.screen, SaveCaseScreen)
        await ask(pilot, app, QUERY)  # its own question again: the pin is ranked, and can be saved
        await wait_until(pilot, lambda: f"expected {path}: rank" in strip_text(app), "the pin again")
        assert "pinned for:" not in strip_text(app)
        app.main.action_leave_query()
        await pilot.press("g")
        await wait_until(pilot, lambda: screen_shown(app, SaveCaseScreen, "OptionList:focus"), "the kinds")
        await pilot.press("enter")
        await wait_until(pilot, golden.exists, "the golden file")
        assert json.loads(golden.read_text(encoding="utf-8")) == {
            "q": QUERY,
            "expect": [path],
            "kind": "prose",
        }
        await ask(pilot, app, OTHER)  # a pin for another question drops this one's, and says so
        await pin_first_hit(pilot, app)
        assert any(f"unpinned 1 answer(s) made for {QUERY!r}" in n.message for n in notices)
        assert app.main.pins is not None and app.main.pins.question == OTHER


async def test_n_saves_a_negative_once_and_not_over_pins(tmp_path: Path) -> None:
    golden = tmp_path / "cases.jsonl"
    golden.write_text('{"q": "kept", "expect": []}', encoding="utf-8")  # no newline at its end
    question = "what is a good recipe for lemon cake?"
    app = make_app(query=question, golden_path=str(golden))
    notices, record = notification_recorder()
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "the hits")
        app.main.action_leave_query()
        await pilot.press("N")
        await wait_until(pilot, lambda: screen_shown(app, SaveCaseScreen, "OptionList:focus"), "the kinds")
        options = app.screen.query_one(OptionList)
        first = options.get_option_at_index(0)
        assert first.id == "unanswerable", "a negative is suggested as unanswerable"
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("saved the negative case" in n.message for n in notices), "saved")
        lines = golden.read_text(encoding="utf-8").splitlines()
        assert lines[0] == '{"q": "kept", "expect": []}', "what was in the file is kept"
        assert json.loads(lines[1]) == {"q": question, "expect": [], "kind": "unanswerable"}
        await pilot.press("N")
        await wait_until(pilot, lambda: any("line 2 already holds" in n.message for n in notices), "refused")
        await pin_first_hit(pilot, app)
        app.main.action_leave_query()
        await pilot.press("N")
        await wait_until(pilot, lambda: any("has pinned answers" in n.message for n in notices), "refused")
        assert len(golden.read_text(encoding="utf-8").splitlines()) == 2


async def test_the_pin_picker_lists_a_symbol_defined_twice_once(tmp_path: Path) -> None:
    (tmp_path / "guide.md").write_text(
        "# Middleware\n\nRegister it:\n\n```python\ndef add_middleware(app):\n"
        "    app.stack.append(1)\n```\n\nOr first:\n\n```python\ndef add_middleware(app):\n"
        "    app.stack.insert(0, 1)\n```\n",
        encoding="utf-8",
    )
    app = make_app(path=str(tmp_path), query="how do I add a middleware?", k=1)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 1), "the hit")
        app.main.action_focus_hits()
        await pilot.press("a")
        await wait_until(pilot, lambda: screen_shown(app, PinScreen, "OptionList:focus"), "the pin choices")
        options = app.screen.query_one(OptionList)
        labels = [str(options.get_option_at_index(n).prompt) for n in range(options.option_count)]
        assert labels == ["guide.md", "guide.md::add_middleware"]
