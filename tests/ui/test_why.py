"""The why key (y): a hit's score taken apart by its own embedding process, shares adding up to it."""

from __future__ import annotations

import re

import pytest
from textual.widgets import Static

from raglens.attribution import Explanation, Unexplained, explain_with
from raglens.ui.screens.why import WhyScreen
from raglens.ui.widgets.hit_list import HitList
from tests.fakes import HashingEmbedder
from tests.ui.conftest import fully_ranked, make_app, notification_recorder, screen_shown, wait_until
from tests.ui.test_bm25_explorer import bm25_ranked, headless_bm25
from tests.ui.test_versus import b_ranked

QUESTION = "how does the worker retry a failed job"


def answered(app: object) -> bool:
    screen = getattr(app, "screen", None)
    return isinstance(screen, WhyScreen) and all(part.attribution is not None for part in screen.parts)


async def test_y_takes_the_highlighted_hits_score_apart_and_the_shares_add_up_to_it() -> None:
    app = make_app(query=QUESTION)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "hits over the whole index")
        second = app.query_one(HitList).hits[1]
        app.main.action_focus_hits()
        await pilot.press("down", "y")
        await wait_until(pilot, lambda: answered(app), "the why of the second hit")
        screen = app.screen
        assert isinstance(screen, WhyScreen)
        (part,) = screen.parts
        assert part.citation == second.window.citation and part.shown == pytest.approx(second.score)
        explanation = part.attribution
        assert isinstance(explanation, Explanation)
        assert explanation.residual(second.score) == pytest.approx(0.0, abs=1e-6)
        # The same shares, computed here from the fake model's own token vectors (an oracle).
        corpus = app.main.corpus
        assert corpus is not None
        text = second.window.text_in(corpus.file(second.window.path).text)
        direct = HashingEmbedder()
        expected = direct.encode_query(QUESTION) @ direct.encode([text])[0]
        assert explanation.total == pytest.approx(float(expected), abs=1e-6)
        shown = str(screen.query_one("#why-part-0", Static).render())
        assert "the question's words:" in shown and "strongest in the window:" in shown
        assert f"score {second.score:.3f}" in shown
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, WhyScreen), "the why closed")


async def test_from_the_window_view_y_explains_the_selected_window() -> None:
    app = make_app(query=QUESTION)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "hits over the whole index")
        app.query_one("#window-scroll").focus()
        await pilot.press("n", "y")
        await wait_until(pilot, lambda: answered(app), "the why of the selected window")
        assert app.main.shown_window is not None
        path, current = app.main.shown_window
        assert current is not None
        window = app.main.a.file_windows(path)[current]
        screen = app.screen
        assert isinstance(screen, WhyScreen) and screen.parts[0].citation == window.citation


async def test_y_before_any_question_says_what_it_needs() -> None:
    notifications, record = notification_recorder()
    app = make_app()
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        app.query_one("#window-scroll").focus()
        await pilot.press("y")
        await wait_until(pilot, lambda: bool(notifications), "a notification")
        assert "ask a question first" in notifications[0].message
        assert not isinstance(app.screen, WhyScreen)


async def test_bm25_explains_a_hit_term_by_term() -> None:
    question = "drain_pending_jobs queue"
    app = make_app(model="bm25", query=question)
    expected = headless_bm25(question, app.main.a.config.params)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: bm25_ranked(app, expected), "BM25's hits")
        top = app.query_one(HitList).hits[0]
        app.main.action_focus_hits()
        await pilot.press("y")
        await wait_until(pilot, lambda: answered(app), "the why of BM25's top hit")
        screen = app.screen
        assert isinstance(screen, WhyScreen)
        explanation = screen.parts[0].attribution
        assert isinstance(explanation, Explanation), explanation
        assert explanation.method.startswith("exact: BM25")
        assert explanation.total == pytest.approx(top.score, rel=1e-5)
        assert {share.token for share in explanation.query_tokens} >= {"drain_pending_jobs", "queue"}


async def test_with_b_open_y_takes_apart_both_scores_of_the_same_text() -> None:
    app = make_app(query=QUESTION)
    async with app.run_test(size=(160, 45)) as pilot:
        b, _ = await b_ranked(app, pilot, "500", "100")
        top = app.query_one(HitList).hits[0]
        app.main.action_focus_hits()
        await pilot.press("y")
        await wait_until(pilot, lambda: answered(app), "the why of A and B")
        screen = app.screen
        assert isinstance(screen, WhyScreen)
        a_part, b_part = screen.parts
        assert a_part.label.startswith("A ·") and b_part.label.endswith("500/100 chars")
        b_window = next(w for w in b.windows if w.citation == b_part.citation)
        assert b_window.path == top.window.path
        assert b_window.start < top.window.end and top.window.start < b_window.end, "B's window overlaps A's"
        for part in (a_part, b_part):
            assert isinstance(part.attribution, Explanation) and part.shown is not None
            assert part.attribution.residual(part.shown) == pytest.approx(0.0, abs=1e-6)


def test_an_unexplained_answer_is_one_line() -> None:
    from raglens.ui.screens.why import WhyPart, part_renderable

    part = WhyPart(
        "A · x", "a.py:L1-L2", 0.5, "text", None, True, Unexplained("no exact attribution for cls pooling")
    )
    assert "no exact attribution for cls pooling" in str(part_renderable(part, "q"))


async def test_the_failure_lab_says_what_share_of_the_top_hit_the_quoted_name_carries(make_tree) -> None:  # type: ignore[no-untyped-def]
    from raglens.ui.screens.report import ReportScreen

    root = make_tree(
        {
            "queue.py": "def drain_pending_jobs(queue):\n    return queue.drain()\n",
            "docs.md": "Call drain_pending_jobs to empty the queue before a worker stops.\n",
            "other.md": "Workers take jobs in the order their queues are listed.\n",
        }
    )
    app = make_app(str(root))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(
            pilot, lambda: app.main.index is not None and app.main.index.is_complete, "the index"
        )
        app.main.action_leave_query()
        await pilot.press("f")
        await wait_until(pilot, lambda: screen_shown(app, ReportScreen, "#report-body"), "the failure lab")
        body = str(app.screen.query_one("#report-body", Static).render())
        match = re.search(
            r"Of the top hit's (\d\.\d+), the quoted words 'drain_pending_jobs' carry \+(\d\.\d+)", body
        )
        assert match is not None, body
        # The fake's oracle: the name is one word of the top window, whose share is its own.
        top = next(line for line in body.splitlines() if "The top hit is" in line)
        citation = top.split("The top hit is ")[1].split(" (")[0]
        corpus = app.main.corpus
        assert corpus is not None
        window = next(w for w in app.main.a.windows if w.citation == citation)
        text = window.text_in(corpus.file(window.path).text)
        explanation = explain_with(HashingEmbedder(), "drain_pending_jobs", text)
        assert isinstance(explanation, Explanation)
        name = next(s for s in explanation.window_tokens if s.token == "drain_pending_jobs")
        assert float(match.group(2)) == pytest.approx(name.contribution, abs=6e-4)


async def test_y_while_the_windows_are_cut_again_says_so_and_asks_nothing() -> None:
    from raglens.ui.screens.settings import Settings
    from raglens.windows import WindowParams

    notifications, record = notification_recorder()
    app = make_app(query=QUESTION)
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "hits over the whole index")
        app.main.action_focus_hits()
        app.main.apply_settings(Settings(WindowParams(size=500, overlap=50), 5))
        app.main.action_why()  # before the new windows are cut: the hits on screen are the old set's
        await wait_until(pilot, lambda: bool(notifications), "a notification")
        assert "being cut again" in notifications[-1].message
        assert not isinstance(app.screen, WhyScreen)
        await wait_until(
            pilot,
            lambda: fully_ranked(app, 5) and app.main.a.windows[0].length <= 500,
            "hits over the new windows",
        )
        await pilot.press("y")
        await wait_until(pilot, lambda: answered(app), "the why over the new windows")
        screen = app.screen
        assert isinstance(screen, WhyScreen)
        (part,) = screen.parts
        assert isinstance(part.attribution, Explanation) and part.shown is not None
        assert part.attribution.residual(part.shown) == pytest.approx(0.0, abs=1e-6)


async def test_an_answer_that_comes_before_the_panels_are_mounted_is_drawn() -> None:
    from textual.app import App, ComposeResult

    from raglens.ui.screens.why import WhyPart

    part = WhyPart("A · fake", "a.py:L1-L1", 0.5, "job done", None, True)
    explanation = Explanation("exact: mean pooling", 0.5, (), ())

    class AnsweredWhileComposing(WhyScreen):
        """The answer lands after the panels are made and before they are mounted."""

        def compose(self) -> ComposeResult:
            yield from super().compose()
            self.show(0, explanation)

    async with App[None]().run_test() as pilot:
        screen = AnsweredWhileComposing("q", [part])
        pilot.app.push_screen(screen)
        await wait_until(pilot, lambda: bool(screen.query("#why-part-0")), "the panel")
        await pilot.pause()
        assert "exact: mean pooling" in str(screen.query_one("#why-part-0", Static).render())
