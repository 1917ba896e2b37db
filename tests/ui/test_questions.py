"""Hits stand only under the question they rank: a question's text and vector travel together, from
the box to the ranking to the screen, for A and for B."""

from __future__ import annotations

import dataclasses

import numpy as np
from textual.widgets import Input, Static

from raglens.corpus import CorpusOptions, load_corpus
from raglens.ui.messages import RankingReady
from raglens.windows import WindowParams, cut_corpus, window_texts
from tests.conftest import SAMPLE_CORPUS
from tests.fakes import HashingEmbedder
from tests.ui.conftest import fully_ranked, index_complete, make_app, ranking_recorder, wait_until

FIRST = "how are failed jobs retried with backoff"
SECOND = "which queue drains pending jobs at shutdown"


def oracle_hits(ranking: RankingReady, k: int) -> list[int]:
    """The rows a plain ranking of ``ranking.query`` over the same ranked rows puts on top."""
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    windows = cut_corpus(corpus, WindowParams())
    embedder = HashingEmbedder()
    vectors = embedder.encode(window_texts(corpus, windows))
    rows = np.asarray(ranking.result.ranked_rows)
    scores = vectors[rows] @ embedder.encode_query(ranking.query)
    order = np.lexsort((rows, -scores))[:k]
    return [int(rows[i]) for i in order]


async def test_every_ranking_drawn_is_of_the_words_it_is_drawn_under() -> None:
    """Issue 29.1: typed while vectors arrived, the periodic re-rank ranked the box's new words with the
    previous question's vector, and drew those hits under the new words."""
    rankings, record = ranking_recorder()
    app = make_app(factory="tests.fakes:PacedHashingEmbedder", query=FIRST)
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        await wait_until(pilot, lambda: bool(rankings), "a first ranking while the index fills")
        assert not index_complete(app), "the test must type while vectors arrive"
        box = app.query_one("#query", Input)
        for end in range(1, len(SECOND) + 1, 4):
            # One more keystroke each time a batch of vectors arrives: the re-ranks those batches
            # start fall between keystrokes, while the box holds words not asked yet.
            embedded = app.main.index.embedded_count if app.main.index is not None else 0
            box.value = SECOND[:end]
            await wait_until(
                pilot,
                lambda embedded=embedded: (
                    index_complete(app)  # type: ignore[misc]
                    or (app.main.index is not None and app.main.index.embedded_count > embedded)
                ),
                "another batch of vectors",
            )
        box.value = SECOND
        await wait_until(
            pilot, lambda: app.main.shown_query == SECOND and fully_ranked(app, 5), "SECOND's hits"
        )
        summary = str(app.query_one("#hit-summary", Static).render())
    assert SECOND in summary
    assert len({r.question for r in rankings}) >= 2
    for ranking in rankings:
        rows = [hit.row for hit in ranking.result.hits]
        assert rows == oracle_hits(ranking, len(rows)), f"question {ranking.question}: {ranking.query!r}"
    numbers: dict[int, str] = {}
    for ranking in rankings:
        assert numbers.setdefault(ranking.question, ranking.query) == ranking.query, "one number, one text"


async def test_typing_back_to_the_question_on_screen_asks_nothing_else() -> None:
    """A pending debounce of half-typed words was left running when the box came back to the question
    asked: 0.2 s later it asked the half-typed words and drew their hits under the full question."""
    from raglens.ui.questions import QUERY_DEBOUNCE_S

    app = make_app(query=FIRST)
    async with app.run_test(size=(160, 45)) as pilot:
        main = app.main
        await wait_until(pilot, lambda: fully_ranked(app, 5), "the question's hits")
        asked: list[str] = []
        submit = main.submit_query

        def recording() -> None:
            asked.append(main.query_one("#query", Input).value)
            submit()

        main.submit_query = recording  # type: ignore[method-assign]
        await pilot.click("#query")
        await pilot.press("end", "backspace", FIRST[-1])  # one keystroke off and back, within the debounce
        passed: list[bool] = []
        main.set_timer(QUERY_DEBOUNCE_S * 3, lambda: passed.append(True))
        await wait_until(pilot, lambda: bool(passed), "three debounce intervals on the app's clock")
        assert asked == [], "nothing new was asked"
        assert main.shown_query == FIRST and main.query_one("#query", Input).value == FIRST


async def test_only_vectors_that_could_enter_the_hits_or_the_noise_band_ask_for_a_prompt_rerank() -> None:
    """Issue 29.5: every batch was ranked and drawn again. The oracle: a copy of the query's own vector
    enters the hits; a copy of a window already ranked, below the k-th hit and no control's best,
    changes nothing on screen."""
    app = make_app(query=FIRST)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "FIRST's hits over every window")
        await wait_until(pilot, lambda: app.main.last_diagnostics.noise is not None, "the noise band")
        main, embedder = app.main, HashingEmbedder()
        corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
        vectors = embedder.encode(window_texts(corpus, cut_corpus(corpus, WindowParams())))
        query = embedder.encode_query(FIRST)
        scores = vectors @ query
        kth = main.last_result.hits[-1].score
        controls_best = [int(np.argmax(vectors @ embedder.encode_query(q))) for q in main._controls]
        unremarkable = [row for row in np.argsort(scores) if row not in controls_best and scores[row] < kth]
        assert len(unremarkable) >= 3
        assert main.could_change_shown(query[None, :])
        assert not main.could_change_shown(vectors[unremarkable[:3]])
        best_of_a_control = vectors[controls_best[0]][None, :]
        assert main.could_change_shown(best_of_a_control), "it ties that control's best"
        main.a.windows = [dataclasses.replace(window) for window in main.a.windows]  # as a re-cut leaves it
        assert main.could_change_shown(vectors[unremarkable[:3]]), "hits of another window set are shown"
