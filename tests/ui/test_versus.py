"""The ``v`` key: configuration B embedded by its own process, ranked as an independent naive RAG run
with B's windows would, under A's hits, and stopped with its process."""

from __future__ import annotations

import numpy as np
from textual.widgets import Input, Static

from raglens.corpus import CorpusOptions, load_corpus
from raglens.embedding_process import EmbeddingProcess
from raglens.run import ConfigurationRun
from raglens.ui.app import RaglensApp
from raglens.ui.screens.versus import VersusScreen
from raglens.ui.widgets.versus_hits import VersusHits
from raglens.windows import Unit, Window, WindowParams, cut_corpus
from tests.conftest import SAMPLE_CORPUS
from tests.fakes import HashingEmbedder
from tests.ui.conftest import fully_ranked, make_app, notification_recorder, screen_shown, wait_until

QUERY = "how are failed jobs retried with backoff"


def reference(params: WindowParams) -> tuple[list[Window], list[int]]:
    """B's windows and each one's rank for QUERY, by brute force with the same fake model."""
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    texts = corpus.texts()
    windows = cut_corpus(corpus, params)
    embedder = HashingEmbedder()
    scores = embedder.encode([w.text_in(texts[w.path]) for w in windows]) @ embedder.encode_query(QUERY)
    order = np.lexsort((np.arange(len(scores)), -scores))
    ranks = [0] * len(windows)
    for rank, row in enumerate(order, 1):
        ranks[int(row)] = rank
    return windows, ranks


async def open_b(app: RaglensApp, pilot, size: str, overlap: str) -> None:  # type: ignore[no-untyped-def]
    app.main.action_leave_query()
    await pilot.press("v")
    await wait_until(pilot, lambda: screen_shown(app, VersusScreen, "#versus-tokens"), "the B form")
    app.screen.query_one("#versus-size", Input).value = size
    app.screen.query_one("#versus-overlap", Input).value = overlap
    app.screen.query_one("#versus-tokens", Input).focus()
    await pilot.press("enter")


async def b_ranked(
    app: RaglensApp, pilot, size: str, overlap: str
) -> tuple[ConfigurationRun, EmbeddingProcess]:  # type: ignore[no-untyped-def]
    """Wait for A's hits, start B with ``size``/``overlap`` windows, wait for B's complete ranking."""
    await wait_until(pilot, lambda: fully_ranked(app, 5), "A's hits")
    await open_b(app, pilot, size, overlap)
    await wait_until(pilot, lambda: b_complete(app), "B ranked")
    b = app.main.b
    assert b is not None and b.process is not None
    return b, b.process


def b_complete(app: RaglensApp) -> bool:
    """B's ranking of the question on screen, over all of B's windows, is drawn."""
    ranking, question = app.main.versus_ranking, app.main.shown_question
    return (
        app.main.b is not None
        and ranking is not None
        and question is not None
        and ranking.question == question.number
        and ranking.result.ranked_count == ranking.result.window_count
        and app.query_one(VersusHits).ranking is ranking
    )


async def test_b_ranks_as_an_independent_run_with_its_windows_and_follows_a_hits() -> None:
    app = make_app(query=QUERY)
    async with app.run_test(size=(160, 45)) as pilot:
        _, process = await b_ranked(app, pilot, "500", "50")
        ranking = app.main.versus_ranking
        assert ranking is not None
        windows, ranks = reference(WindowParams(Unit.CHARS, 500, 50))
        expected = sorted(range(len(windows)), key=lambda row: ranks[row])[:5]
        assert [hit.window.citation for hit in ranking.result.hits] == [windows[r].citation for r in expected]
        for hit, movement in zip(app.main.last_result.hits, ranking.comparison.a, strict=True):  # type: ignore[union-attr]
            window = hit.window
            over = [
                ranks[row]
                for row, other in enumerate(windows)
                if other.path == window.path and other.start < window.end and window.start < other.end
            ]
            assert movement.rank_in_other == min(over)
        shown = str(app.query_one(VersusHits).render())
        assert shown.startswith("B · 500/50 chars") and "top-5 overlap" in shown
        for hit in ranking.result.hits:
            assert hit.window.citation in shown
        b_pid = process.pid
    assert not _alive(b_pid), "B's process ends with the app"


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_b_the_same_as_a_or_impossible_is_refused_in_the_form() -> None:
    app = make_app(query=QUERY)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "A's hits")
        await open_b(app, pilot, "500", "900")
        error = app.screen.query_one("#versus-error", Static)
        await wait_until(pilot, lambda: "smaller" in str(error.render()), "the overlap refused")
        app.screen.query_one("#versus-size", Input).value = "1000"
        app.screen.query_one("#versus-overlap", Input).value = "200"
        await pilot.press("enter")
        await wait_until(pilot, lambda: "the same as A" in str(error.render()), "B = A refused")
        assert app.main.b is None and isinstance(app.screen, VersusScreen)
        app.screen.query_one("#versus-model", Input).value = "bm25"
        app.screen.query_one("#versus-tokens", Input).value = "128"
        await pilot.press("enter")
        await wait_until(pilot, lambda: "no max_seq_length" in str(error.render()), "a token limit for bm25")
        assert app.main.b is None and isinstance(app.screen, VersusScreen)


async def test_stop_comparing_ends_b_and_its_process() -> None:
    app = make_app(query=QUERY)
    async with app.run_test(size=(160, 45)) as pilot:
        _, process = await b_ranked(app, pilot, "600", "100")
        await pilot.press("v")
        await wait_until(pilot, lambda: screen_shown(app, VersusScreen, "#versus-stop"), "the form with stop")
        await pilot.click("#versus-stop")
        await wait_until(pilot, lambda: app.main.b is None, "B stopped")
        assert not app.query_one(VersusHits).display
        await wait_until(pilot, lambda: not process.is_alive(), "B's process ended")


async def test_a_pinned_answer_shows_its_rank_in_a_and_in_b() -> None:
    from raglens.compare import ExpectedMove
    from raglens.diagnostics.golden import ExpectedRef

    app = make_app(query=QUERY)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "A's hits")
        assert app.main.pin_refs(QUERY, ["docs/retries.md"])  # as the pin screen pins a whole file
        await open_b(app, pilot, "500", "50")
        await wait_until(pilot, lambda: b_complete(app), "B ranked")
        ranking = app.main.versus_ranking
        assert ranking is not None
        b_windows, b_ranks = reference(WindowParams(Unit.CHARS, 500, 50))
        a_windows, a_ranks = reference(WindowParams(Unit.CHARS, 1000, 200))

        def best(windows: list[Window], ranks: list[int]) -> int:
            return min(rank for rank, w in zip(ranks, windows, strict=True) if w.path == "docs/retries.md")

        assert ranking.expected == (
            ExpectedMove(
                ExpectedRef.parse("docs/retries.md"), best(a_windows, a_ranks), best(b_windows, b_ranks)
            ),
        )
        assert "expected docs/retries.md: A #" in str(app.query_one(VersusHits).render())


async def test_b_grid_lies_over_a_file_and_its_distribution_under_a_in_the_strip() -> None:
    from raglens.ui.widgets.file_lines import FileLines
    from raglens.ui.widgets.score_strip import ScoreStrip

    app = make_app(query=QUERY)
    async with app.run_test(size=(160, 45)) as pilot:
        await b_ranked(app, pilot, "500", "50")
        app.main.show_file("docs/queues.md", 0)
        await pilot.pause()
        view = app.query_one(FileLines)
        layout = view.layout_shown
        b_windows, _ = reference(WindowParams(Unit.CHARS, 500, 50))
        starts = {w.line_start for w in b_windows if w.path == "docs/queues.md"}
        assert layout is not None and layout.other_starts == starts and len(starts) > 1
        for number in starts - layout.cut_lines:
            assert view.shown_text(number).split()[1] == "▸", view.shown_text(number)
        assert "B's grid (o)" in str(app.query_one("#window-header", Static).render())
        strip = str(app.query_one(ScoreStrip).render()).splitlines()
        assert any(line.startswith("B ") for line in strip), strip
        app.main.action_leave_query()
        await pilot.press("o")
        await pilot.pause()
        layout = view.layout_shown
        assert layout is not None and not layout.other_starts
        assert "B's grid" not in str(app.query_one("#window-header", Static).render())


async def test_a_new_a_setting_keeps_b_and_a_rescan_of_changed_files_starts_b_afresh(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    from raglens.ui.screens.settings import Settings

    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE_CORPUS, corpus)
    app = make_app(path=str(corpus), query=QUERY)
    async with app.run_test(size=(160, 45)) as pilot:
        run, process = await b_ranked(app, pilot, "500", "50")
        app.main.apply_settings(Settings(WindowParams(Unit.CHARS, 800, 100), 5))
        await wait_until(
            pilot, lambda: fully_ranked(app, 5) and app.main.a.config.params.size == 800, "A with 800/100"
        )
        await wait_until(pilot, lambda: b_complete(app), "B ranked for A's new ranking")
        assert app.main.b is run and run.process is process and process.is_alive(), "B was left as it is"
        (corpus / "docs" / "retries.md").write_text("Retries are gone.\n", encoding="utf-8")
        app.main.action_rescan()
        await wait_until(pilot, lambda: app.main.b is not run and app.main.b is not None, "B afresh")
        await wait_until(pilot, lambda: b_complete(app), "the new B ranked")
        assert not process.is_alive()


async def test_b_process_killed_is_started_again_as_a_is() -> None:
    """B's run is A's kind of run: a process that dies is replaced within the same budget."""
    import os
    import signal

    app = make_app(query=QUERY)
    notifications, record = notification_recorder()
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        b, first = await b_ranked(app, pilot, "500", "50")
        os.kill(first.pid, signal.SIGKILL)
        await wait_until(
            pilot,
            lambda: b.process is not None and b.process is not first and b.model is not None,
            "B's new process",
        )
        await wait_until(
            pilot,
            lambda: any(
                "B's embedding process ended (killed by SIGKILL)" in str(n.message) for n in notifications
            ),
            "the report",
        )
        assert app.main.b is b and not b.stopped and b.incarnation == 2
        app.query_one("#query", Input).value = "what does the backoff do"
        await wait_until(
            pilot,
            lambda: (
                app.main.shown_query == "what does the backoff do"
                and fully_ranked(app, 5)
                and b_complete(app)
            ),
            "a new question ranked by B's new process",
        )
        assert not first.is_alive()
