"""Helpers for driving the app: build it with a fake model and wait on conditions, never on sleeps."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import pytest
from textual.message import Message
from textual.notifications import Notification, Notify
from textual.pilot import Pilot
from textual.screen import Screen

from raglens.cli.main import explorer_config_from
from raglens.ui.app import RaglensApp
from raglens.ui.messages import RankingReady
from tests.conftest import REPO_ROOT

WAIT_TIMEOUT_S = 180.0
"""Generous: the real model takes 5-20 s just to import on a 2-core machine."""
FAKE_WAIT_TIMEOUT_S = 60.0
"""With a fake model nothing waits on torch: the slowest fake run (a killed process, restarted) takes
seconds, so a wait this long means the app is stuck."""


def make_app(
    path: str = "sample_corpus",
    factory: str | None = "tests.fakes:HashingEmbedder",
    *,
    cache_dir: str | None = None,
    device: str | None = None,
    precision: str | None = None,
    model: str | None = None,
    query: str | None = None,
    k: int | None = None,
    golden_path: str | None = None,
    **display: object,
) -> RaglensApp:
    """The app ``raglens PATH [QUERY] …`` opens, built by the CLI's own factory from those arguments.

    ``path`` is relative to the repository, so no absolute path reaches the screen; ``factory`` is a
    fake model (None: the real one); no ``cache_dir`` runs without a cache; ``display`` sets what no
    flag does (``show_rates``, ``error_log_path``).
    """
    arguments = [path, query] if query else [path]  # positionals first, as argparse wants them
    if factory is not None:
        arguments += ["--embedder-factory", factory]
    arguments += ["--cache-dir", cache_dir] if cache_dir is not None else ["--no-cache"]
    for flag, value in (
        ("--device", device),
        ("--precision", precision),
        ("--model", model),
        ("-k", k),
        ("--golden", golden_path),
    ):
        if value is not None:
            arguments += [flag, str(value)]
    config = explorer_config_from(arguments)
    return RaglensApp(replace(config, **display))  # type: ignore[arg-type]


def ranking_recorder() -> tuple[list[RankingReady], Callable[[Message], None]]:
    """A list of every RankingReady the app handles, and the ``message_hook`` that fills it."""
    rankings: list[RankingReady] = []

    def record(message: Message) -> None:
        if isinstance(message, RankingReady):
            rankings.append(message)

    return rankings, record


def notification_recorder() -> tuple[list[Notification], Callable[[Message], None]]:
    """A list of every notification the app shows, and the ``message_hook`` that fills it."""
    notifications: list[Notification] = []

    def record(message: Message) -> None:
        if isinstance(message, Notify):
            notifications.append(message.notification)

    return notifications, record


async def wait_until(pilot: Pilot[None], condition: Callable[[], bool], what: str) -> None:
    """Let the app run until ``condition`` holds.

    Fails at once, with the app's last log lines, if the app stopped running; else after
    WAIT_TIMEOUT_S with the real model, FAKE_WAIT_TIMEOUT_S with a fake one.
    """
    app = pilot.app
    real_model = isinstance(app, RaglensApp) and app.config.engine.embedder_factory is None
    limit = WAIT_TIMEOUT_S if real_model else FAKE_WAIT_TIMEOUT_S
    deadline = time.monotonic() + limit
    while not condition():
        if not app.is_running:
            raise AssertionError(f"the app stopped while waiting for {what}{last_log_lines(app)}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {limit} s waiting for {what}{last_log_lines(app)}")
        await pilot.pause(0.02)


def last_log_lines(app: object, count: int = 8) -> str:
    """The explorer's last pipeline-log lines, to say where a wait got stuck."""
    from raglens.ui.widgets.pipeline_log import PipelineLog

    if not isinstance(app, RaglensApp):
        return ""
    logs = app.query(PipelineLog)
    if not logs:
        return ""
    return "; the log ends: " + " | ".join(logs.first().entries[-count:])


def index_complete(app: RaglensApp) -> bool:
    return app.main.index is not None and app.main.index.is_complete


@pytest.fixture(autouse=True)
def _run_from_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO_ROOT)


def fully_ranked(app: RaglensApp, hit_count: int) -> bool:
    """The hits on screen come from a ranking over the complete index, and every one is drawn.

    Also that start-up is over: launched with a question, the first file opens a refresh after its
    hits, and a test that opens another file meanwhile would race it. And that the coverage of the
    complete index, measured in a worker, is in (the log and the status line say it): a snapshot
    showed the log with it one run, without it the next.
    """
    from raglens.ui.widgets.hit_list import HitList

    result = app.main.last_result
    return (
        not app.main.first_file_pending
        and index_complete(app)
        and result is not None
        and result.ranked_count == result.window_count
        and result.window_count == len(app.main.a.windows)  # not the hits of a set since re-cut
        and [h.row for h in app.query_one(HitList).hits] == [h.row for h in result.hits]
        and len(result.hits) == hit_count
        and hits_drawn(app)
        and coverage_settled(app)
    )


def coverage_settled(app: RaglensApp) -> bool:
    """The complete index's coverage is measured, or cannot be (no reading extents, or BM25)."""
    index = app.main.a.index
    if index is None or not index.is_complete:
        return False
    return app.main.a.lexical or not index.extents_known() or app.main.cut_short is not None


def ranked_with_noise_band(app: RaglensApp, hit_count: int) -> bool:
    """``fully_ranked``, and that ranking already had the control questions' noise band."""
    diagnostics = app.main.last_diagnostics
    return fully_ranked(app, hit_count) and diagnostics is not None and diagnostics.noise is not None


def hits_drawn(app: RaglensApp) -> bool:
    """Every hit item has mounted its text: a new item's Static arrives a refresh after the item."""
    from textual.widgets import Static

    from raglens.ui.widgets.hit_list import HitItem

    return all(item.query(Static) for item in app.query(HitItem))


def hit_texts(app: RaglensApp) -> list[str]:
    """The text of each hit on screen, best first; wait on ``fully_ranked`` or ``hits_drawn`` first."""
    from textual.widgets import Static

    from raglens.ui.widgets.hit_list import HitItem

    assert hits_drawn(app), "a hit item is still being mounted: wait for hits_drawn first"
    return [str(item.query_one(Static).render()) for item in app.query(HitItem)]


def screen_shown(app: RaglensApp, screen_type: type[Screen[object]], selector: str) -> bool:
    """``app`` shows a ``screen_type`` with ``selector`` mounted: a pushed screen composes a refresh later."""
    return isinstance(app.screen, screen_type) and bool(app.screen.query(selector))


def noise_band_drawn(app: RaglensApp) -> bool:
    """The score strip shows the noise band (the control questions were answered before this
    ranking), laid out for the strip's width."""
    import re

    from raglens.ui.widgets.score_strip import ScoreStrip

    strip = app.query_one(ScoreStrip)
    return strip.settled and bool(re.search(r"noise (edge )?-?\d", str(strip.render())))
