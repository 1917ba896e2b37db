"""The ranking worker's helpers, without an app."""

from __future__ import annotations

import numpy as np
import pytest

from raglens.index import VectorIndex
from raglens.ui.ranking import NoiseFloorMemo
from tests.unit.diagnostics.test_lexical import windows_and_index


def test_the_noise_floor_memo_measures_again_only_when_the_index_changes() -> None:
    windows, index = windows_and_index([[1, 0], [0, 1]])
    partial = VectorIndex(windows, 2)
    partial.fill([0], index.vectors[:1])
    controls = {"a": np.array([0.6, 0.8], dtype=np.float32)}
    memo = NoiseFloorMemo()
    first = memo.noise_floor(partial.snapshot(), controls)
    assert first is not None and memo.noise_floor(partial.snapshot(), controls) is first, "same rows"
    partial.fill([1], index.vectors[1:2])  # a vector arrived: the band may move
    second = memo.noise_floor(partial.snapshot(), controls)
    assert second is not first and second is not None and second.high == pytest.approx(0.8)
    assert memo.noise_floor(index, controls) is not second  # another index
    assert memo.noise_floor(index, {}) is None
