"""The noise band: its edge, spread and verdicts against an independent statement, and one pass equal
to a full ranking per control question."""

from __future__ import annotations

import statistics

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from raglens.diagnostics.noise_floor import ControlScore, NoiseFloor, NoiseVerdict, measure_noise_floor
from raglens.index import VectorIndex
from raglens.search import rank
from raglens.windows import Unit, Window

scores = st.floats(min_value=-0.25, max_value=0.875, allow_nan=False, width=32)


def floor_of(tops: list[float]) -> NoiseFloor:
    return NoiseFloor(tuple(ControlScore(f"q{n}", top, "a.md:L1-L2") for n, top in enumerate(tops)))


def percentile_95(values: list[float]) -> float:
    """Linear interpolation between closest ranks, written out (numpy's default method)."""
    ordered = sorted(values)
    position = 0.95 * (len(ordered) - 1)
    below = int(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


@given(st.lists(scores, min_size=2, max_size=40), scores)
def test_a_verdict_is_above_undecided_or_within_by_the_edge_and_spread(
    tops: list[float], score: float
) -> None:
    noise = floor_of(tops)
    edge = percentile_95(tops)
    spread = statistics.stdev(tops)
    assert abs(noise.edge - edge) < 1e-6 and abs(noise.spread - spread) < 1e-6
    verdict = noise.verdict(score)
    if score > noise.edge + noise.spread:
        assert verdict is NoiseVerdict.ABOVE
    elif score >= noise.edge - noise.spread:
        assert verdict is NoiseVerdict.UNDECIDED
    else:
        assert verdict is NoiseVerdict.WITHIN
    assert noise.stands_above(score) == (verdict is NoiseVerdict.ABOVE)


def test_a_score_just_over_the_best_control_is_undecided_not_above() -> None:
    """The issue's case: controls 0.154-0.267 and an off-topic question at 0.276 is no answer."""
    noise = floor_of([0.154, 0.19, 0.21, 0.23, 0.245, 0.267])
    assert noise.verdict(0.276) is NoiseVerdict.UNDECIDED
    assert noise.verdict(0.268) is NoiseVerdict.UNDECIDED
    assert noise.verdict(0.45) is NoiseVerdict.ABOVE
    assert noise.verdict(0.15) is NoiseVerdict.WITHIN


@given(st.data())
def test_the_band_from_one_product_equals_a_full_ranking_per_question(data: st.DataObject) -> None:
    count = data.draw(st.integers(1, 30))
    embedded = data.draw(st.lists(st.integers(0, count - 1), min_size=1, unique=True))
    generator = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    windows = [Window("a.md", Unit.CHARS, row, row, row + 1, row + 1, row + 1) for row in range(count)]
    index = VectorIndex(windows, 8)
    vectors = generator.normal(size=(count, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for row in embedded:
        index.fill([row], vectors[[row]])
    questions = [f"control {n}" for n in range(5)]
    query_vectors = {
        q: v / np.linalg.norm(v) for q, v in zip(questions, generator.normal(size=(5, 8)), strict=True)
    }
    snapshot = index.snapshot()
    noise = measure_noise_floor(snapshot, lambda q: query_vectors[q].astype(np.float32), questions)
    assert noise is not None
    rows_by_citation = {windows[row].citation: row for row in embedded}
    for control in noise.controls:
        best = rank(snapshot, query_vectors[control.question].astype(np.float32), 1).hits[0]
        assert abs(control.top_score - best.score) < 1e-5
        # The cited window is an embedded one, and scores the band's figure for this question.
        cited = rows_by_citation[control.citation]
        assert abs(float(vectors[cited] @ query_vectors[control.question]) - control.top_score) < 1e-5


def test_nothing_embedded_has_no_band() -> None:
    index = VectorIndex([Window("a.md", Unit.CHARS, 0, 0, 1, 1, 1)], 4)
    assert measure_noise_floor(index.snapshot(), lambda q: np.ones(4, np.float32) / 2) is None
