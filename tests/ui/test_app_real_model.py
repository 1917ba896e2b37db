"""The explorer with the real bundled model on the sample corpus."""

from __future__ import annotations

import pytest

from raglens.ui.widgets.hit_list import HitList
from tests.ui.conftest import fully_ranked, make_app, wait_until

pytestmark = pytest.mark.model


async def test_the_real_model_ranks_the_answer_first() -> None:
    app = make_app(factory=None, device="cpu")
    async with app.run_test(size=(160, 45)) as pilot:
        assert app.main.a.model is None, "the first frame does not wait for the model"
        await wait_until(pilot, lambda: app.main.a.model is not None, "the model to load")
        model = app.main.a.model
        assert model is not None
        assert (model.name, model.dimension, model.max_seq_length) == ("all-MiniLM-L6-v2", 384, 256)
        await pilot.click("#query")
        await pilot.press(*"what happens after a job is acknowledged?")
        await wait_until(pilot, lambda: fully_ranked(app, 5), "the hits over the whole index")
        assert app.query_one(HitList).hits[0].window.path == "docs/queues.md"
        index = app.main.index
        assert index is not None
        cut_short = [
            window
            for row, window in enumerate(index.windows)
            if (extent := index.extent(row)) is not None and extent.chars_read < window.length
        ]
        assert cut_short, "some 1000-character windows of the sample are longer than 256 tokens"


async def test_a_question_the_model_cannot_read_gets_no_noise_verdict_in_the_explorer() -> None:
    """The explorer tells a German question to an English-only model, as search does, and gives its
    hits no verdict: no 'within noise', no 'likely unanswerable'."""
    from textual.widgets import Static

    app = make_app(factory=None, device="cpu", query="wie starte ich einen Worker?")
    async with app.run_test(size=(160, 45)) as pilot:

        def told() -> bool:
            diagnostics = app.main.last_diagnostics
            return fully_ranked(app, 5) and diagnostics is not None and diagnostics.unread_language

        await wait_until(pilot, told, "the language told")
        strip = str(app.query_one("#score-strip", Static).render())
        assert "no noise verdict: the question reads as German; the model reads English only" in strip
        assert "unanswerable" not in strip
        diagnostics = app.main.last_diagnostics
        assert diagnostics is not None and diagnostics.noise is not None
        assert all(diagnostics.noise_verdict(hit.score) is None for hit in app.query_one(HitList).hits)
        assert "within noise" not in " ".join(str(body.render()) for body in app.query("HitBody"))
