"""What follows the last vector of a window set: the hits over all of it come first."""

from __future__ import annotations

import pytest

from raglens.ui.screens.main import MainScreen
from tests.ui.conftest import fully_ranked, make_app, wait_until


async def test_the_complete_index_s_coverage_is_measured_after_its_ranking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The coverage's worker (~0.4 s at 100k windows) held the GIL beside the ranking of the complete
    index, which took 0.54 s instead of 0.16 s on a warm start: it starts once that ranking ended."""
    started_beside_a_ranking: list[bool] = []
    measure = MainScreen.measure_coverage

    def measured(screen: MainScreen, *args: object) -> object:
        started_beside_a_ranking.append(screen._ranking is not None)
        return measure(screen, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(MainScreen, "measure_coverage", measured)
    app = make_app(query="how are failed jobs retried?")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "the hits, and the coverage")
        assert started_beside_a_ranking == [False]
