"""The ``x`` key: the eval grid over the golden file, run as a child command whose events move a
progress bar, its table and chart shown in the app; escape stops it, a failure is said with its
reason, and a missing golden file is said so."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Input, OptionList, Static

from raglens.ui.screens.grid import GridRunScreen, GridScreen
from raglens.ui.screens.grid_report import GridReportScreen
from tests.ui.conftest import (
    fully_ranked,
    index_complete,
    make_app,
    notification_recorder,
    screen_shown,
    wait_until,
)

CASES = [
    {"q": "how are failed jobs retried with backoff?", "expect": ["docs/retries.md", "tidepool/retry.py"]},
    {"q": "how do I schedule a nightly job?", "expect": ["docs/scheduling.md"], "mode": "any"},
    {"q": "a recipe for banana bread", "expect": [], "kind": "negative"},
]


def golden_file(tmp_path: Path) -> Path:
    path = tmp_path / "golden.jsonl"
    path.write_text("".join(json.dumps(case) + "\n" for case in CASES), encoding="utf-8")
    return path


async def start_grid(app, pilot, axes: str) -> None:  # type: ignore[no-untyped-def]
    await wait_until(pilot, lambda: index_complete(app), "A's index")
    app.main.action_leave_query()
    await pilot.press("x")
    await wait_until(pilot, lambda: screen_shown(app, GridScreen, "#grid-axes"), "the grid form")
    app.screen.query_one("#grid-axes", Input).value = axes
    await pilot.press("enter")


async def test_x_runs_the_grid_with_progress_and_shows_its_table_and_chart(tmp_path: Path) -> None:
    app = make_app(golden_path=str(golden_file(tmp_path)), cache_dir=str(tmp_path / "cache"))
    async with app.run_test(size=(160, 45)) as pilot:
        await start_grid(app, pilot, "size=500,1000")
        await wait_until(
            pilot, lambda: screen_shown(app, GridReportScreen, "#report-body"), "the grid's report"
        )
        report = str(app.screen.query_one("#report-body", Static).render())
        assert "◀ best" in report and "recall@8 (filled) and MRR (hollow) against size" in report, report
        rows = [
            line for line in report.splitlines() if line.strip().startswith(("500 ", "1000 ")) and "%" in line
        ]
        assert len(rows) == 2, report
        assert app.main.grid_child is None


async def test_a_question_chosen_in_the_grid_report_is_asked_with_its_answer_pinned(tmp_path: Path) -> None:
    app = make_app(golden_path=str(golden_file(tmp_path)))
    async with app.run_test(size=(160, 45)) as pilot:
        await start_grid(app, pilot, "size=500,1000")
        await wait_until(pilot, lambda: screen_shown(app, GridReportScreen, "#grid-cases"), "the questions")
        options = app.screen.query_one("#grid-cases", OptionList)
        assert options.option_count == 2, "the two answerable cases; the negative has no answer to pin"
        options.focus()
        options.highlighted = 1
        report = app.screen
        assert isinstance(report, GridReportScreen)
        chosen = report.cases[1]
        await pilot.press("enter")
        second = CASES[1]
        await wait_until(pilot, lambda: not isinstance(app.screen, GridReportScreen), "the report closed")
        assert app.main.query_one("#query", Input).value == second["q"]
        assert app.main.pins is not None and app.main.pins.question == second["q"]
        assert list(app.main.pins.refs()) == second["expect"]
        await wait_until(pilot, lambda: fully_ranked(app, 5), "the question ranked")
        assert app.main.shown_query == second["q"]
        assert app.main.last_diagnostics is not None
        assert [str(entry.ref) for entry in app.main.last_diagnostics.expected] == second["expect"]
        # The row it is compared with opens as B, its boundaries over A's.
        from raglens.ui.grid_actions import row_to_compare

        assert [row.params.size for row in app.main.grid_rows] == [500, 1000]
        assert chosen.query == second["q"]
        row = row_to_compare(app.main.grid_rows, app.main.grid_best, chosen, app.main.a.config)
        if row is None:
            assert app.main.b is None
        else:
            assert app.main.b is not None and app.main.b.config == row


async def test_escape_stops_a_running_grid_and_its_process(tmp_path: Path) -> None:
    app = make_app(
        golden_path=str(golden_file(tmp_path)), factory="tests.fakes:PacedHashingEmbedder", cache_dir=None
    )
    async with app.run_test(size=(160, 45)) as pilot:
        await start_grid(app, pilot, "size=300,400,500,600")
        await wait_until(pilot, lambda: screen_shown(app, GridRunScreen, "#grid-progress"), "the progress")
        child = app.main.grid_child
        assert child is not None
        await wait_until(
            pilot, lambda: "1/4" in str(app.screen.query_one("#grid-step", Static).render()), "a step"
        )
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.main.grid_child is None, "the grid stopped")
        assert child.has_ended(), "the child was ended"


async def test_a_grid_that_fails_says_why_and_closes_its_progress(tmp_path: Path) -> None:
    golden = golden_file(tmp_path)
    app = make_app(golden_path=str(golden))
    notifications, record = notification_recorder()
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        await wait_until(pilot, lambda: index_complete(app), "A's index")
        app.main.action_leave_query()
        await pilot.press("x")
        await wait_until(pilot, lambda: screen_shown(app, GridScreen, "#grid-axes"), "the grid form")
        golden.write_text("this line is not a case\n", encoding="utf-8")  # the child reads it again
        app.screen.query_one("#grid-axes", Input).value = "size=500,1000"
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: any(n.title == "the eval grid failed" for n in notifications),
            "the failure's notification",
        )
        [failure] = [n for n in notifications if n.title == "the eval grid failed"]
        assert "golden.jsonl" in failure.message and "line 1" in failure.message, failure.message
        await wait_until(pilot, lambda: not isinstance(app.screen, GridRunScreen), "the progress closed")
        assert app.main.grid_child is None


async def test_a_grid_without_a_golden_file_says_how_to_make_one(tmp_path: Path) -> None:
    app = make_app(golden_path=str(tmp_path / "none.jsonl"))
    notifications, record = notification_recorder()
    async with app.run_test(size=(80, 24), message_hook=record) as pilot:
        await wait_until(pilot, lambda: app.main.corpus is not None, "the corpus")
        app.main.action_leave_query()
        await pilot.press("x")
        await wait_until(
            pilot,
            lambda: any("save cases with g" in str(n.message) for n in notifications),
            "the notification",
        )
        assert not isinstance(app.screen, GridScreen)


async def test_a_bad_axis_is_refused_in_the_form(tmp_path: Path) -> None:
    app = make_app(golden_path=str(golden_file(tmp_path)))
    async with app.run_test(size=(80, 24)) as pilot:
        await start_grid(app, pilot, "size=100 overlap=200")
        error = app.screen.query_one("#grid-error", Static)
        await wait_until(pilot, lambda: "smaller" in str(error.render()), "the refusal")
        assert app.main.grid_child is None and isinstance(app.screen, GridScreen)


def test_the_row_a_case_is_compared_with_is_the_best_or_where_it_moved() -> None:
    from raglens.configuration import RetrievalConfig
    from raglens.grid_events import GridCase
    from raglens.ui.grid_actions import row_to_compare
    from raglens.windows import Unit, WindowParams

    rows = [RetrievalConfig(WindowParams(Unit.CHARS, size, 100)) for size in (500, 800, 1000)]
    case = GridCase(3, "q?", ("a.md",), ("1", "miss ▼", "2 ▼"))
    assert row_to_compare(rows, 0, case, rows[2]) == rows[0], "A is not the best: the best is B"
    assert row_to_compare(rows, 0, case, rows[0]) == rows[1], "A is the best: where the case moved"
    same = GridCase(3, "q?", ("a.md",), ("1", "1", "1"))
    assert row_to_compare(rows, 0, same, rows[0]) is None, "it moved nowhere: no B"
    assert row_to_compare(rows, None, case, rows[2]) is None, "no row found anything: no best"
