"""BM25 in the explorer, as A (``raglens PATH --model bm25``) and as B (the ``v`` form): the same
ranking the headless BM25 gives, scores labelled and drawn on their own scale, no noise band."""

from __future__ import annotations

import os
import signal

from textual.widgets import Input

from raglens.bm25_index import BM25Index
from raglens.corpus import CorpusOptions, load_corpus
from raglens.search import SearchResult
from raglens.ui.app import RaglensApp
from raglens.ui.widgets.hit_list import HitList
from raglens.ui.widgets.score_strip import LEXICAL_SCALE, ScoreStrip
from raglens.ui.widgets.versus_hits import VersusHits
from raglens.windows import Unit, WindowParams, cut_corpus
from tests.conftest import SAMPLE_CORPUS
from tests.ui.conftest import (
    fully_ranked,
    hit_texts,
    hits_drawn,
    index_complete,
    make_app,
    notification_recorder,
    wait_until,
)
from tests.ui.test_versus import open_b

IDENTIFIER = "drain_pending_jobs"


def bm25_ranked(app: RaglensApp, expected: SearchResult) -> bool:
    """The hits on screen are ``expected``'s, drawn, over the complete index: BM25 ranks only the
    windows that share a word with the question, so ``fully_ranked``'s count of them does not apply."""
    result = app.main.last_result
    return (
        not app.main.first_file_pending
        and index_complete(app)
        and result is not None
        and result.window_count == expected.window_count
        and [(h.row, h.score) for h in result.hits] == [(h.row, h.score) for h in expected.hits]
        and [h.row for h in app.query_one(HitList).hits] == [h.row for h in expected.hits]
        and hits_drawn(app)
    )


def b_bm25_ranked(app: RaglensApp) -> bool:
    """B's BM25 ranking of the question on screen, over B's complete index, is drawn."""
    ranking, question, b = app.main.versus_ranking, app.main.shown_question, app.main.b
    return (
        b is not None
        and b.is_complete
        and ranking is not None
        and question is not None
        and ranking.question == question.number
        and app.query_one(VersusHits).ranking is ranking
    )


def headless_bm25(query: str, params: WindowParams, k: int = 5) -> SearchResult:
    """What ``raglens search sample_corpus QUERY --model bm25`` ranks: the oracle for the explorer."""
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    return BM25Index(cut_corpus(corpus, params), corpus.texts()).search(query, k)


async def test_bm25_as_a_ranks_as_the_headless_bm25_with_its_own_scale_and_no_noise_band() -> None:
    app = make_app(query=IDENTIFIER, model="bm25")
    notifications, record = notification_recorder()
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        expected = headless_bm25(IDENTIFIER, WindowParams())
        await wait_until(pilot, lambda: bm25_ranked(app, expected), "BM25's hits")
        result = app.main.last_result
        assert result is not None and not result.cosine
        summary = str(app.query_one("#hit-summary").render())
        assert f"BM25 over all 66 windows: {result.ranked_count} share a word with it" in summary
        top = hit_texts(app)[0]
        assert f"{expected.hits[0].score:.3f} ████████████" in top, "the top hit's bar runs to the end"
        strip = str(app.query_one(ScoreStrip).render())
        assert LEXICAL_SCALE in strip and "noise" not in strip.replace("no noise band", "")
        assert app.main.last_diagnostics is not None and app.main.last_diagnostics.noise is None
        assert app.main.a.model is not None and app.main.a.model.lexical
        await pilot.press("escape", "m")
        await wait_until(
            pilot, lambda: any("BM25 scores have none" in str(n.message) for n in notifications), "heat"
        )
        assert not app.main.heat_on
        await pilot.press("f")
        await wait_until(pilot, lambda: any("BM25 has not" in str(n.message) for n in notifications), "lab")
        app.query_one("#query", Input).value = "how are failed jobs retried?"
        prose = headless_bm25("how are failed jobs retried?", WindowParams())
        await wait_until(pilot, lambda: bm25_ranked(app, prose), "the second question's hits")
        assert app.main.shown_question is not None
        assert app.main.shown_question.text == "how are failed jobs retried?"


async def test_new_windows_ask_a_bm25_question_again_of_the_new_window_set() -> None:
    """A BM25 answer scores one window set: after ``w`` re-cuts, the question is scored over the new."""
    app = make_app(query=IDENTIFIER, model="bm25")
    async with app.run_test(size=(160, 45)) as pilot:
        first = headless_bm25(IDENTIFIER, WindowParams())
        await wait_until(pilot, lambda: bm25_ranked(app, first), "BM25's hits over 1000/200 windows")
        await pilot.press("escape", "w")
        await wait_until(pilot, lambda: app.screen.query("#settings-size"), "the window form")
        app.screen.query_one("#settings-size", Input).value = "300"
        app.screen.query_one("#settings-overlap", Input).value = "0"
        await pilot.press("enter")
        params = WindowParams(Unit.CHARS, 300, 0)
        expected = headless_bm25(IDENTIFIER, params)
        await wait_until(pilot, lambda: bm25_ranked(app, expected), "BM25's hits over the new windows")
        assert app.main.a.config.params == params


async def test_bm25_as_b_in_the_v_form_ranks_beside_the_model() -> None:
    app = make_app(query=IDENTIFIER)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "A's hits")
        await open_b(app, pilot, "1000", "200")
        # open_b pressed enter in the token field with A's model: B = A is refused; now name bm25.
        app.screen.query_one("#versus-model", Input).value = "bm25"
        await pilot.press("enter")
        await wait_until(pilot, lambda: b_bm25_ranked(app), "B ranked by BM25")
        ranking = app.main.versus_ranking
        assert ranking is not None and not ranking.result.cosine
        expected = headless_bm25(IDENTIFIER, WindowParams())
        assert [(h.row, h.score) for h in ranking.result.hits] == [(h.row, h.score) for h in expected.hits]
        shown = str(app.query_one(VersusHits).render())
        assert shown.startswith("B · bm25") or "bm25" in shown.splitlines()[0], shown.splitlines()[0]
        assert f"{expected.hits[0].score:.3f} ██████████" in shown, "B's top bar runs to the end"


async def test_a_bm25_process_killed_is_started_again_and_answers_the_next_question() -> None:
    """Its new process has no index until it is sent the windows again: without them it held every
    question for ever."""
    app = make_app(query=IDENTIFIER, model="bm25")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: bm25_ranked(app, headless_bm25(IDENTIFIER, WindowParams())), "hits")
        first = app.main.a.process
        assert first is not None
        os.kill(first.pid, signal.SIGKILL)
        await wait_until(
            pilot, lambda: app.main.a.process is not None and app.main.a.process is not first, "a new process"
        )
        question = "how are failed jobs retried?"
        app.query_one("#query", Input).value = question
        await wait_until(pilot, lambda: bm25_ranked(app, headless_bm25(question, WindowParams())), "its hits")
