"""Nothing the explorer computes is cut off: wrapped files and log, whole hits on demand, modes that
say they are on, and a settings form that fits 80x24."""

from __future__ import annotations

import pytest
from rich.cells import cell_len
from rich.style import Style
from textual.widgets import Input, Static

from raglens.query_words import query_stems, word_spans
from raglens.ui.screens.settings import SettingsScreen
from raglens.ui.widgets.file_lines import BAND_STYLES, HEAT_STEPS, FileLines
from raglens.ui.widgets.hit_list import EXCERPT_LINES, QUERY_WORD_STYLE, HitBody, HitItem
from raglens.ui.widgets.pipeline_log import PipelineLog
from tests.ui.conftest import fully_ranked, hits_drawn, index_complete, make_app, screen_shown, wait_until

QUERY = "how are failed jobs retried with backoff"


def header_text(app: object) -> str:
    return str(app.query_one("#window-header", Static).render())  # type: ignore[attr-defined]


@pytest.mark.parametrize("size", [(110, 24), (160, 45)])
async def test_the_log_wraps_every_entry_to_its_pane_and_again_when_the_pane_changes(
    size: tuple[int, int],
) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: index_complete(app), "the index")
        log = app.query_one(PipelineLog)
        await wait_until(pilot, lambda: any("read by no window" in e for e in log.entries), "coverage")
        app.main.action_leave_query()
        if not log.display or not log.region.width:
            await pilot.press("l")
        await wait_until(pilot, lambda: log.region.width > 0 and bool(log.lines), "the log on screen")

        def each_entry_whole() -> bool:
            width = log.scrollable_content_region.width
            rows = [strip.text.rstrip() for strip in log.lines]
            joined = "".join("".join(rows).split())  # a word may be broken across rows: compare letters
            return all(cell_len(row) <= width for row in rows) and all(
                "".join(entry.split()) in joined for entry in log.entries
            )

        await wait_until(pilot, each_entry_whole, "every entry whole within the pane")
        await pilot.resize_terminal(size[0] + 30, size[1])
        await wait_until(pilot, each_entry_whole, "every entry whole after a resize")


async def test_heat_shows_its_scale_in_the_window_header_and_uses_no_band_colour() -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: index_complete(app), "the index")
        app.main.show_file("docs/queues.md", 0)
        app.main.action_leave_query()
        await pilot.press("m")
        await wait_until(pilot, lambda: "heat (m) on" in header_text(app), "the heat legend")
        assert "no ranked query yet" in header_text(app)
        app.query_one("#query", Input).value = QUERY
        await wait_until(pilot, lambda: fully_ranked(app, 5), "the ranking")
        app.main.show_file("docs/queues.md", 0)
        await wait_until(pilot, lambda: "no ranked query" not in header_text(app), "the scored legend")
        assert "<0.1" in header_text(app) and "≥0.6" in header_text(app)
        await pilot.press("m")
        await wait_until(pilot, lambda: "heat" not in header_text(app), "heat off: no legend")
    band_colours = {style.bgcolor for style in BAND_STYLES.values() if style.bgcolor}
    heat_colours = [Style.parse(f"on {colour}").bgcolor for _, colour in HEAT_STEPS]
    assert not band_colours & set(heat_colours)
    for colour in heat_colours:  # one hue: green dominates every step, so no step reads as amber
        assert colour is not None
        red, green, blue = colour.get_truecolor()
        assert green > red and green > blue, colour


async def test_the_settings_form_fits_80x24_with_its_title_showing() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.main.action_leave_query()
        await pilot.press("w")
        await wait_until(pilot, lambda: screen_shown(app, SettingsScreen, "#settings-k"), "the form")
        await pilot.pause()
        box = app.screen.query_one("#settings-box")
        assert box.border_title == "Window settings"
        assert box.max_scroll_y == 0 and box.scroll_y == 0, "the whole form shows, unscrolled"
        screen = app.screen.region
        assert screen.contains_region(box.region)
        for field in (
            "#settings-unit",
            "#settings-size",
            "#settings-overlap",
            "#settings-k",
            "#settings-apply",
        ):
            assert box.region.contains_region(app.screen.query_one(field).region), field


async def test_e_shows_a_whole_hit_in_place_and_marks_the_query_words() -> None:
    app = make_app(query=QUERY)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "the ranking")
        items = list(app.query(HitItem))
        long_one = next(
            i for i, item in enumerate(items) if len(item.query_one(HitBody).lines.lines) > EXCERPT_LINES
        )
        app.main.action_leave_query()
        await pilot.press("h", *["down"] * long_one)
        body = items[long_one].query_one(HitBody)
        folded = str(body.render())
        window_lines = len(body.lines.lines)
        assert f"… {window_lines - EXCERPT_LINES} more line(s)" in folded and "e shows all" in folded
        assert folded.count("\n   │ ") == EXCERPT_LINES + 1
        await pilot.press("e")
        await wait_until(pilot, lambda: "e folds" in str(body.render()), "the whole window")
        assert str(body.render()).count("\n   │ ") == window_lines + 1
        await pilot.press("e")
        await wait_until(pilot, lambda: "e shows all" in str(body.render()), "folded again")

        stems = query_stems(QUERY)
        for item in items:
            lines = item.query_one(HitBody).lines
            for number, line in enumerate(lines.lines):
                expected = [line.plain[a:b] for a, b in word_spans(line.plain, stems)]
                marked = [line.plain[s.start : s.end] for s in line.spans if str(s.style) == QUERY_WORD_STYLE]
                assert marked == expected, line.plain
                assert (number in lines.word_lines) == bool(expected)
        assert any(item.query_one(HitBody).lines.word_lines for item in items), "the query's words occur"


async def test_prose_wraps_code_does_not_and_s_switches_it_for_every_file() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: index_complete(app), "the index")
        view = app.query_one(FileLines)
        app.main.show_file("docs/queues.md", 0)
        await pilot.pause()
        assert view.wrap and "wrapped (s)" in header_text(app)
        layout = view.layout_shown
        assert layout is not None
        width = view.scrollable_content_region.width
        wrapped_somewhere = False
        for number in range(1, layout.line_count + 1):
            rows = view.shown_rows(number)
            wrapped_somewhere |= len(rows) > 1
            assert all(cell_len(row) <= width for row in rows), rows
            gutter = len(str(layout.line_count)) + 3
            assert "".join(row[gutter:] for row in rows) == view.shown_text(number)[gutter:]
        assert wrapped_somewhere, "queues.md has lines longer than the pane"
        assert view.virtual_size.width <= view.size.width, "nothing to scroll sideways"

        app.main.show_file("tidepool/worker.py", 0)
        await pilot.pause()
        assert not view.wrap and "wrapped" not in header_text(app)
        app.main.action_leave_query()
        await pilot.press("s")
        await pilot.pause()
        assert view.wrap and "wrapped (s)" in header_text(app)
        await pilot.press("s")
        app.main.show_file("docs/queues.md", 0)
        await pilot.pause()
        assert not view.wrap, "the user's choice holds for prose too"


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
async def test_the_help_is_never_wrapped_again_on_screen(size: tuple[int, int]) -> None:
    """At 80 columns the help's 95-column lines were wrapped a second time, mid-sentence."""
    from raglens.ui.screens.help import HELP_TEXT, HelpScreen

    app = make_app()
    async with app.run_test(size=size) as pilot:
        app.main.action_leave_query()
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        body = app.screen.query_one("#help-box Static", Static)
        await wait_until(pilot, lambda: body.size.width > 0, "the help laid out")
        assert max(len(line) for line in HELP_TEXT.splitlines()) <= body.size.width
        assert body.size.height == HELP_TEXT.count("\n") + 1, "one screen row per line of the help"


async def test_s_keeps_the_selected_window_in_view() -> None:
    """Wrapping kept the scroll row, not the line: the selected window left the view."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: index_complete(app), "the index")
        view = app.query_one(FileLines)
        app.main.show_file("docs/queues.md", 2)  # prose: wrapped; its third window is far down
        await pilot.pause()
        window = app.main.a.file_windows("docs/queues.md")[2]

        def in_view() -> bool:
            top = view.scroll_y
            row = view.row_of_line(window.line_start)
            return top <= row < top + view.scrollable_content_region.height

        await wait_until(pilot, in_view, "the selected window in view")
        app.main.action_leave_query()
        for _ in range(2):  # unwrapped, then wrapped again
            await pilot.press("s")
            await pilot.pause()
            assert in_view(), (view.wrap, view.scroll_y, view.row_of_line(window.line_start))


def citations_in_view(app) -> int:  # type: ignore[no-untyped-def]
    """How many hits show their whole citation (path and line range) inside the hits pane's view."""
    from raglens.ui.widgets.hit_list import HitBody

    view = app.query_one("#hit-items").region
    seen = 0
    for body in app.query(HitBody):
        window = body.hit.window
        line_range = f":L{window.line_start}-L{window.line_end}"
        name = window.path.rsplit("/", 1)[-1]
        rows = str(body.render()).split("\n")
        at = next((n for n, row in enumerate(rows) if f"{name}{line_range}" in row), None)
        if at is not None and view.y <= body.region.y + at < view.bottom and body.region.height > at:
            seen += 1
    return seen


@pytest.mark.parametrize("query", ["compute_backoff_delay", QUERY])
async def test_at_80x24_three_hits_with_whole_citations_fit_under_the_findings(query: str) -> None:
    """Issue 26's goal: with a question typed and its findings present (an identifier's literal
    finding too), one hit was visible at 80x24."""
    from tests.ui.conftest import ranked_with_noise_band

    app = make_app(query=query)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: ranked_with_noise_band(app, 5) and hits_drawn(app), "the hits")
        await pilot.pause()
        assert citations_in_view(app) >= 3, str(app.query_one("#hit-items").region)


async def test_at_160x45_all_of_b_s_rows_are_in_view() -> None:
    from tests.ui.test_versus import b_complete, open_b

    app = make_app(query=QUERY)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "A's hits")
        await open_b(app, pilot, "500", "50")
        await wait_until(pilot, lambda: b_complete(app), "B ranked")
        await pilot.pause()
        scroll = app.query_one("#versus-scroll")
        assert scroll.max_scroll_y == 0, "B's title, its top k and where A's hits went, without scrolling"
        ranking = app.main.versus_ranking
        assert ranking is not None and len(ranking.result.hits) == 5
