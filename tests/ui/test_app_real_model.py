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
