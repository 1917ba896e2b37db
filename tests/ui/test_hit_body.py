"""A hit's body is a FittedText: another hit of the same height is only repainted, never laid out
(a layout re-rendered every widget on the screen for each new question), and what it paints is
always its text, as tall as its text, at every width."""

from __future__ import annotations

from unittest import mock

from textual.app import App, ComposeResult
from textual.geometry import Region

from raglens.search import Hit
from raglens.ui.widgets.hit_list import EXCERPT_LINES, NARROW_BELOW, HitBody, hit_excerpt, hit_text
from raglens.windows import Unit, WindowParams, cut_windows

FILE = "\n".join(f"line {n} of the file, with some words" for n in range(1, 200))
WIDTH = 60


def hit(rank: int, window_number: int, size: int = 400) -> Hit:
    window = cut_windows("notes/a.txt", FILE, WindowParams(Unit.CHARS, size, 0))[window_number]
    return Hit(rank, 0.5 - rank / 100, window, window_number)


class OneBody(App[None]):
    CSS = f"HitBody {{ width: {WIDTH}; height: auto; }}"

    def compose(self) -> ComposeResult:
        first = hit(1, 0)
        yield HitBody(first, hit_excerpt(first, FILE))


def painted(body: HitBody) -> list[str]:
    """The rows the body gives the compositor, as plain text, trailing spaces dropped."""
    width, height = body.size
    return [strip.text.rstrip() for strip in body.render_lines(Region(0, 0, width, height))]


def expected(body: HitBody, width: int) -> list[str]:
    """The body's text laid out for ``width``, line by line, before a long line is cut at the width."""
    text = hit_text(body.hit, body.lines, width, expanded=body.expanded)
    return [line.plain.rstrip() for line in text.split("\n", allow_blank=True)]


def shows_its_text(body: HitBody, width: int) -> bool:
    """Whether the painted rows are the text made for ``width``: as many, each the start of its line."""
    rows, lines = painted(body), expected(body, width)
    return len(rows) == len(lines) and all(
        line.startswith(row) for row, line in zip(rows, lines, strict=True)
    )


async def test_a_hit_of_the_same_height_is_repainted_and_another_height_laid_out() -> None:
    app = OneBody()
    async with app.run_test(size=(80, 40)) as pilot:
        body = app.query_one(HitBody)
        with mock.patch.object(body, "refresh", wraps=body.refresh) as refresh:
            second = hit(2, 3)
            body.show(second, hit_excerpt(second, FILE))
            assert refresh.call_args.kwargs == {"layout": False}, "another hit, as tall: repainted only"
            await pilot.pause()
            assert body.size.height == 1 + EXCERPT_LINES + 1  # heading, excerpt, the fold line
            assert shows_its_text(body, WIDTH)
            assert f"{second.score:.3f}" in painted(body)[0]

            body.show(second, body.lines, expanded=True)
            assert refresh.call_args.kwargs == {"layout": True}, "the whole window: taller, laid out"
            await pilot.pause()
            assert body.size.height == len(expected(body, WIDTH)) > 1 + EXCERPT_LINES + 1
            assert shows_its_text(body, WIDTH)

            short = hit(3, 0, size=40)  # "line 1 of the file, with some words\nline"
            body.show(short, hit_excerpt(short, FILE))
            assert refresh.call_args.kwargs == {"layout": True}, "a window of two lines: laid out"
            await pilot.pause()
            assert body.size.height == 3
            assert shows_its_text(body, WIDTH)


async def test_a_narrower_pane_gets_the_text_made_for_its_width() -> None:
    """The text made for one width is never painted at another (it is made once per width)."""
    app = OneBody()
    async with app.run_test(size=(80, 40)) as pilot:
        body = app.query_one(HitBody)
        wide = painted(body)
        narrow_width = NARROW_BELOW - 10
        body.styles.width = narrow_width
        await pilot.pause()
        assert body.size.width == narrow_width
        assert shows_its_text(body, narrow_width)
        assert expected(body, narrow_width) != expected(body, WIDTH)  # narrow: one line of the window
        assert body.size.height == len(expected(body, narrow_width)) < len(wide)
