"""The embedding process killed under the explorer: reported, started again, indexing resumed from the cache.

The process is real (``python -m raglens.embedding_server`` with a fake model inside), and so is SIGKILL.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from textual.widgets import Static

from raglens.embedding_events import EngineTrouble
from raglens.process_restarts import RESTART_LIMIT, RestartBudget, describe_exit
from raglens.ui.messages import RunEvent
from raglens.ui.widgets.hit_list import HitList
from tests.ui.conftest import fully_ranked, make_app, notification_recorder, wait_until

SLOW = "tests.fakes:SlowHashingEmbedder"


def write_corpus(root: Path, files: int = 40) -> Path:
    """About ten windows a file: enough batches of the slow fake model to kill the process mid-index."""
    root.mkdir()
    for number in range(files):
        paragraph = f"Section {number}: how the scheduler retries failed job {number} with backoff. " * 14
        (root / f"notes_{number:02}.md").write_text(paragraph * 8, encoding="utf-8")
    return root


async def test_a_killed_process_is_reported_started_again_and_indexing_resumes(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    app = make_app(
        path=str(corpus), factory=SLOW, query="how are failed jobs retried?", cache_dir=str(tmp_path)
    )
    notifications, record = notification_recorder()
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        await wait_until(
            pilot,
            lambda: (
                app.main.index is not None
                and app.main.index.embedded_count >= 16
                and app.main.last_result is not None
            ),
            "some windows embedded and a first ranking",
        )
        first = app.main.a.process
        assert first is not None and not app.main.index.is_complete, (
            "the test must kill the process mid-index"
        )
        embedded_before = app.main.index.embedded_count
        os.kill(first.pid, signal.SIGKILL)
        await wait_until(
            pilot,
            lambda: any("killed by SIGKILL" in str(n.message) for n in notifications),
            "the report",
        )
        await wait_until(
            pilot, lambda: app.main.a.process is not None and app.main.a.process is not first, "a new process"
        )
        assert app.main.index.embedded_count >= embedded_before, "nothing embedded before the crash was lost"
        await wait_until(
            pilot, lambda: fully_ranked(app, app.main.k), "hits over every window, after the restart"
        )
        assert not first.is_alive()
        assert not app.main.a.stopped
        app.query_one("#query").value = "what does the backoff do?"
        await wait_until(
            pilot,
            lambda: app.main.shown_query == "what does the backoff do?" and fully_ranked(app, app.main.k),
            "a new question answered by the new process",
        )


async def test_a_process_that_keeps_dying_is_stopped_and_the_hits_stay(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus", files=4)
    app = make_app(
        path=str(corpus), factory=SLOW, query="how are failed jobs retried?", cache_dir=str(tmp_path)
    )
    notifications, record = notification_recorder()
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, app.main.k), "hits over every window")
        shown = [hit.row for hit in app.query_one(HitList).hits]
        for death in range(RESTART_LIMIT + 1):
            process = app.main.a.process
            assert process is not None
            os.kill(process.pid, signal.SIGKILL)
            await wait_until(
                pilot, lambda process=process: app.main.a.process is not process, f"death {death + 1} handled"
            )
        assert app.main.a.stopped and app.main.a.process is None
        assert any("stopped starting it" in str(n.message) for n in notifications)
        assert [hit.row for hit in app.query_one(HitList).hits] == shown, "the last hits stay on screen"
        app.query_one("#query").value = "something new"
        await wait_until(
            pilot,
            lambda: "cannot be embedded" in str(app.query_one("#hit-summary", Static).render()),
            "the hits pane says why a new question gets no answer",
        )
        await pilot.press("escape", "r")
        await wait_until(
            pilot,
            lambda: app.main.a.process is not None and app.main.a.process.is_alive(),
            "r starts it again",
        )
        await wait_until(
            pilot,
            lambda: app.main.shown_query == "something new" and fully_ranked(app, app.main.k),
            "an answer",
        )


def test_the_restart_budget_allows_a_few_deaths_a_minute() -> None:
    budget = RestartBudget(limit=3, period_s=60)
    assert [budget.allow(t) for t in (0, 1, 2, 3)] == [True, True, True, False]
    assert budget.allow(61), "a minute later the budget is back"


def test_an_exit_says_which_signal_ended_the_process() -> None:
    assert describe_exit(-9) == "killed by SIGKILL"
    assert describe_exit(1) == "exit code 1"
    assert describe_exit(None) == "exit code unknown"


async def test_an_engine_that_failed_its_check_is_reported_and_the_run_goes_on() -> None:
    """The embedding process says an export failed its witness (EngineTrouble): a warning the user sees
    and the log keeps; the run ranks on as before."""
    app = make_app(query="how are failed jobs retried?")
    notifications, record = notification_recorder()
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, app.main.k), "hits over every window")
        message = (
            "the ONNX export of fake failed its check (its bytes are not the ones checked when it was made)"
        )
        app.main.post_message(RunEvent(app.main.a.run_id, app.main.a.incarnation, EngineTrouble(message)))
        await wait_until(
            pilot,
            lambda: any(n.title == "model engine" and n.message == message for n in notifications),
            "warned",
        )
        (shown,) = [n for n in notifications if n.title == "model engine"]
        assert shown.severity == "warning"
        assert fully_ranked(app, app.main.k) and not app.main.a.stopped
