"""A hit's body is a FittedText: another hit of the same height is only repainted, never laid out
(a layout re-rendered every widget on the screen for each new question), and its height is always
its text's."""

from __future__ import annotations

from textual.app import App, ComposeResult

from raglens.search import Hit
from raglens.ui.widgets.hit_list import EXCERPT_LINES, HitBody, hit_excerpt, hit_text
from raglens.windows import Unit, WindowParams, cut_windows

FILE = "\n".join(f"line {n} of the file, with some words" for n in range(1, 200))


def hit(rank: int, window_number: int, size: int = 400) -> tuple[Hit, str]:
    window = cut_windows("notes/a.txt", FILE, WindowParams(Unit.CHARS, size, 0))[window_number]
    return Hit(rank, 0.5 - rank / 100, window, window_number), FILE


class OneBody(App[None]):
    CSS = "HitBody { width: 60; height: auto; }"

    def compose(self) -> ComposeResult:
        first, text = hit(1, 0)
        yield HitBody(first, hit_excerpt(first, text))


async def test_a_hit_of_the_same_height_is_repainted_and_a_taller_one_laid_out() -> None:
    app = OneBody()
    async with app.run_test(size=(80, 24)) as pilot:
        body = app.query_one(HitBody)
        layouts: list[bool] = []
        refresh = body.refresh

        def recording_refresh(*regions, repaint=True, layout=False, recompose=False):  # type: ignore[no-untyped-def]
            layouts.append(layout)
            return refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

        body.refresh = recording_refresh  # type: ignore[method-assign]
        second, text = hit(2, 3)
        body.show(second, hit_excerpt(second, text))
        await pilot.pause()
        assert layouts[-1] is False, "another hit, as tall: repainted only"
        assert "notes/a.txt:L" in str(body.render()) and f"{second.score:.3f}" in str(body.render())
        assert body.size.height == 1 + EXCERPT_LINES + 1  # heading, excerpt, the fold line

        body.show(second, body.lines, expanded=True)
        await pilot.pause()
        assert layouts[-1] is True, "the whole window: taller, laid out"
        whole = hit_text(second, body.lines, 60, expanded=True)
        assert body.size.height == whole.plain.count("\n") + 1 > 1 + EXCERPT_LINES + 1

        short, _ = hit(3, 0, size=40)  # "line 1 of ... words\nline"
        body.show(short, hit_excerpt(short, FILE))
        await pilot.pause()
        assert layouts[-1] is True, "a window of two lines: shorter, laid out"
        assert body.size.height == hit_text(short, body.lines, 60).plain.count("\n") + 1 == 3
