"""SVG snapshots of the explorer's main states, at a fixed size with the fake model and no clocks."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from raglens.ui.app import RaglensApp
from tests.ui.conftest import fully_ranked, hits_drawn, make_app, noise_band_drawn, wait_until

SIZE = (150, 42)
QUERY = "what happens after a job is acknowledged"


def snapshot_app(**options: Any) -> RaglensApp:
    app = make_app(show_rates=False, **options)
    app.animation_level = "none"  # the progress bar would otherwise be caught mid-animation
    return app


def scrollbars_settled(app: RaglensApp) -> bool:
    """The window view's scrollbar is drawn for the rows and the scroll the view has now."""
    from raglens.ui.widgets.file_lines import FileLines

    for view in app.query(FileLines):
        bar = view.vertical_scrollbar
        shown = view.show_vertical_scrollbar and view.styles.scrollbar_size_vertical
        if shown and (bar.window_virtual_size != view.virtual_size.height or bar.position != view.scroll_y):
            return False
    return True


async def steady(pilot: Pilot[None]) -> None:
    """No blinking cursor, the scrollbars in step with their views, and every pending refresh drawn."""
    pilot.app.query_one("#query", Input).cursor_blink = False
    await pilot.pause()
    app = pilot.app
    assert isinstance(app, RaglensApp)
    await wait_until(pilot, lambda: scrollbars_settled(app), "the window view's scrollbar in step with it")
    await pilot.pause()


def test_just_opened_while_the_model_loads(snap_compare: Any) -> None:
    app = snapshot_app(factory="tests.fakes:never_loading_embedder")

    async def run_before(pilot: Pilot[None]) -> None:
        await wait_until(pilot, lambda: app.main.corpus is not None, "the corpus")
        await steady(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_indexing_in_progress_ranks_what_is_embedded(snap_compare: Any) -> None:
    app = snapshot_app(factory="tests.fakes:StalledAfterFirstBatchEmbedder", query=QUERY)

    async def run_before(pilot: Pilot[None]) -> None:
        await wait_until(
            pilot,
            lambda: (
                app.main.last_result is not None
                and app.main.last_result.ranked_count == 8
                and noise_band_drawn(app)
                and hits_drawn(app)
                and not app.main.first_file_pending  # the top hit's window is open: start-up is over
            ),
            "a ranking over the first batch, with the noise band",
        )
        await steady(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_hits_shown(snap_compare: Any) -> None:
    app = snapshot_app(query=QUERY)

    async def run_before(pilot: Pilot[None]) -> None:
        await wait_until(pilot, lambda: fully_ranked(app, 5) and noise_band_drawn(app), "the hits")
        await steady(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_window_view_with_boundaries_and_the_truncation_mark(snap_compare: Any) -> None:
    app = snapshot_app(query=QUERY)

    async def run_before(pilot: Pilot[None]) -> None:
        await wait_until(pilot, lambda: fully_ranked(app, 5) and noise_band_drawn(app), "the hits")
        app.main.show_file("docs/queues.md", 1)
        await steady(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_a_narrow_terminal_with_the_corpus_pane_folded(snap_compare: Any) -> None:
    app = snapshot_app(query=QUERY)

    async def run_before(pilot: Pilot[None]) -> None:
        await wait_until(pilot, lambda: fully_ranked(app, 5) and noise_band_drawn(app), "the hits")
        await steady(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


ROOMY_SIZES = {"80x24": (80, 24), "160x45": (160, 45)}


async def _identifier_findings(pilot: Pilot[None]) -> None:
    pilot.app.query_one("#query", Input).value = "compute_backoff_delay"


async def _heat_on(pilot: Pilot[None]) -> None:
    pilot.app.main.show_file("docs/queues.md", 0)  # type: ignore[attr-defined]
    pilot.app.main.action_leave_query()  # type: ignore[attr-defined]
    await pilot.press("m")


async def _hit_expanded(pilot: Pilot[None]) -> None:
    pilot.app.main.action_leave_query()  # type: ignore[attr-defined]
    await pilot.press("h", "down", "e")


async def _prose_wrapped(pilot: Pilot[None]) -> None:
    pilot.app.main.show_file("docs/queues.md", 1)  # type: ignore[attr-defined]


async def _settings_open(pilot: Pilot[None]) -> None:
    pilot.app.main.action_leave_query()  # type: ignore[attr-defined]
    await pilot.press("w")


async def _log_shown(pilot: Pilot[None]) -> None:
    pilot.app.main.action_leave_query()  # type: ignore[attr-defined]
    await pilot.press("l")


ROOMY_STATES = {
    "identifier-findings": _identifier_findings,
    "heat-on": _heat_on,
    "hit-expanded": _hit_expanded,
    "prose-wrapped": _prose_wrapped,
    "settings-open": _settings_open,
    "log-shown": _log_shown,
}


@pytest.mark.parametrize("size", list(ROOMY_SIZES))
@pytest.mark.parametrize("state", list(ROOMY_STATES))
def test_findings_have_room(snap_compare: Any, state: str, size: str) -> None:
    """Each state issue 14 gave room to, at the two sizes it was found cut at."""
    app = snapshot_app(query=QUERY)

    async def run_before(pilot: Pilot[None]) -> None:
        await wait_until(pilot, lambda: fully_ranked(app, 5) and noise_band_drawn(app), "the hits")
        await ROOMY_STATES[state](pilot)
        if state == "identifier-findings":
            await wait_until(
                pilot,
                lambda: (
                    app.main.shown_query == "compute_backoff_delay"
                    and fully_ranked(app, 5)
                    and noise_band_drawn(app)
                ),
                "the identifier's ranking",
            )
        await pilot.pause()
        await steady(pilot)

    assert snap_compare(app, terminal_size=ROOMY_SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", list(ROOMY_SIZES))
def test_configuration_b_under_a(snap_compare: Any, size: str) -> None:
    """``v`` with 500/50 windows: B's hits and their movement under A's."""
    from tests.ui.test_versus import b_complete, open_b

    app = snapshot_app(query=QUERY)

    async def run_before(pilot: Pilot[None]) -> None:
        await wait_until(pilot, lambda: fully_ranked(app, 5) and noise_band_drawn(app), "the hits")
        await open_b(app, pilot, "500", "50")
        await wait_until(pilot, lambda: b_complete(app), "B ranked over all its windows")
        await pilot.pause()
        await steady(pilot)

    assert snap_compare(app, terminal_size=ROOMY_SIZES[size], run_before=run_before)


def test_why_this_score_at_80_by_24(snap_compare: Any) -> None:
    from raglens.ui.screens.why import WhyScreen

    app = snapshot_app(query=QUERY)

    async def run_before(pilot: Pilot[None]) -> None:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "the hits")
        app.main.action_focus_hits()
        await pilot.press("y")

        def answered() -> bool:
            screen = app.screen
            return isinstance(screen, WhyScreen) and all(p.attribution is not None for p in screen.parts)

        await wait_until(pilot, answered, "the why view filled in")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
