"""What a launch with a question does first: its hits, then the first file; the control questions at once."""

from __future__ import annotations

from concurrent.futures import Future

import numpy as np
import pytest

from raglens.diagnostics.control_questions import CONTROL_QUESTIONS
from raglens.embedding_process import EmbeddingProcess
from raglens.ui.app import RaglensApp
from raglens.ui.questions import FIRST_FILE_WAIT_S
from tests.ui.conftest import fully_ranked, make_app, ranked_with_noise_band, ranking_recorder, wait_until

QUERY = "how are failed jobs retried?"
FIRST_FILE = "CONTRIBUTING.md"
"""The corpus's first file, the one the window view opens at start."""


def record_openings(app: RaglensApp) -> list[tuple[str, str | None]]:
    """Each file the window view opens from now on, with the question whose hits were on screen then."""
    openings: list[tuple[str, str | None]] = []
    show_file = app.main.show_file

    def recording(path: str, current: int | None, **options: bool) -> None:
        openings.append((path, app.main.shown_query))
        show_file(path, current, **options)

    app.main.show_file = recording  # type: ignore[method-assign]
    return openings


async def test_a_launch_question_draws_its_hits_then_opens_its_top_hit() -> None:
    """The first file's paint took ~0.1 s of the UI thread that the first hits waited for; then the
    window view shows the top hit's window, not the corpus's first file."""
    app = make_app(query=QUERY)
    rankings, record = ranking_recorder()
    openings = record_openings(app)
    tops: list[tuple[str, int]] = []
    show_file = app.main.show_file

    def recording(path: str, current: int | None, **options: bool) -> None:
        result = app.main.last_result
        if result is not None and result.hits:
            tops.append((result.hits[0].window.path, result.hits[0].window.index))
        show_file(path, current, **options)

    app.main.show_file = recording  # type: ignore[method-assign]
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5) and bool(openings), "hits, then a file")
        assert openings[0][1] == QUERY, "the file opened once the hits were drawn"
        assert openings[0][0] == tops[0][0] != FIRST_FILE, "the top hit's file"
        final = app.main.last_result
        assert final is not None
        top = final.hits[0].window
        await wait_until(
            pilot, lambda: app.main.shown_window == (top.path, top.index), "the final top hit's window"
        )
        app.main.action_next_window()  # the user moves: the view is theirs from now on
        moved = app.main.shown_window
        seen = len(rankings)
        app.main.rerank(now=True)
        await wait_until(pilot, lambda: len(rankings) > seen and fully_ranked(app, 5), "a ranking again")
        assert app.main.shown_window == moved != (top.path, top.index)


async def test_a_slow_first_ranking_opens_the_first_file_then_its_top_hit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cold start ranks after FIRST_FILE_WAIT_S: the first file opens meanwhile, and the top hit
    replaces it when the hits come, since the user has not moved."""
    import time

    from raglens.ui import questions, ranking

    real = ranking.rank_for_display

    def slow(*args: object, **options: object) -> object:
        time.sleep(1.0)  # in the ranking worker: the first file's timer fires first
        return real(*args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(ranking, "rank_for_display", slow)
    monkeypatch.setattr(questions, "FIRST_FILE_WAIT_S", 0.2)  # no hits in time, as on a cold start
    app = make_app(query=QUERY)
    openings = record_openings(app)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "the hits")
        final = app.main.last_result
        assert final is not None
        top = final.hits[0].window
        await wait_until(pilot, lambda: app.main.shown_window == (top.path, top.index), "the top hit")
        assert openings[0] == (FIRST_FILE, None), "the first file, while no hits had come"


async def test_without_a_question_the_first_file_opens_with_the_corpus() -> None:
    app = make_app()
    openings = record_openings(app)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(
            pilot, lambda: app.main.corpus is not None and bool(openings), "the corpus and a file"
        )
        assert openings[0] == (FIRST_FILE, None)


async def test_the_first_file_opens_even_when_no_hits_come() -> None:
    """A model that never loads ranks nothing: the file opens after FIRST_FILE_WAIT_S all the same."""
    rankings, record = ranking_recorder()

    app = make_app(factory="tests.fakes:never_loading_embedder", query=QUERY)
    openings = record_openings(app)
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        await wait_until(pilot, lambda: app.main.corpus is not None, "the corpus")
        assert not openings, f"the file waits up to {FIRST_FILE_WAIT_S} s for the hits"
        await wait_until(pilot, lambda: bool(openings), "the first file, without hits")
        assert openings[0] == (FIRST_FILE, None) and not rankings and app.main.a.model is None


async def test_the_control_questions_are_asked_at_mount_and_once_per_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Asked with the question, before the model is ready, and not again when it is: the first ranking
    can draw the noise band instead of ranking and painting twice."""
    app = make_app(query=QUERY)
    asked: list[tuple[str, bool]] = []
    embed_query = EmbeddingProcess.embed_query

    def recording(process: EmbeddingProcess, text: str) -> Future[np.ndarray]:
        asked.append((text, app.main.a.model is not None))
        return embed_query(process, text)

    monkeypatch.setattr(EmbeddingProcess, "embed_query", recording)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: ranked_with_noise_band(app, 5), "a ranking with the noise band")
        controls = [ready for text, ready in asked if text in CONTROL_QUESTIONS]
        assert controls == [False] * len(CONTROL_QUESTIONS), "each asked once, before the model was ready"
