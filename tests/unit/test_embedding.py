from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from raglens.embedding import embed_in_batches, normalize_rows
from raglens.errors import BadInputError, IndexingCancelled
from tests.fakes import HashingEmbedder


@given(arrays(np.float64, st.tuples(st.integers(0, 20), st.integers(1, 16)), elements=st.floats(-1e3, 1e3)))
def test_rows_become_unit_length_float32_or_stay_zero(matrix: np.ndarray) -> None:
    unit = normalize_rows(matrix)
    assert unit.dtype == np.float32
    norms = np.linalg.norm(unit.astype(np.float64), axis=1)
    for norm, original in zip(norms, matrix, strict=True):
        if np.linalg.norm(original) > 1e-6:
            assert norm == pytest.approx(1.0, abs=1e-5)
        elif not original.any():
            assert norm == 0.0


def test_normalize_refuses_a_single_vector() -> None:
    with pytest.raises(ValueError, match="2-d"):
        normalize_rows(np.ones(3))


def test_embedding_goes_batch_by_batch() -> None:
    embedder = HashingEmbedder()
    batches = list(embed_in_batches(embedder, [f"text {i}" for i in range(37)], batch_size=16))
    assert [b.shape for b in batches] == [(16, 64), (16, 64), (5, 64)]
    assert embedder.encoded_batches == [16, 16, 5]


def test_embedding_stops_between_batches_when_asked() -> None:
    embedder = HashingEmbedder()
    calls = 0

    def stop_after_two() -> bool:
        nonlocal calls
        calls += 1
        return calls > 2

    produced = []
    with pytest.raises(IndexingCancelled, match="after 32 of 40"):
        for batch in embed_in_batches(embedder, ["x"] * 40, batch_size=16, should_stop=stop_after_two):
            produced.append(batch)
    assert len(produced) == 2


def test_native_bf16_is_read_from_the_cpu_flags() -> None:
    from raglens.embedding import cpu_has_native_bf16

    assert cpu_has_native_bf16("processor : 0\nflags : fpu avx2 avx512f avx512_bf16\n")
    assert cpu_has_native_bf16("flags\t\t: sse amx_bf16 amx_tile\n")
    assert not cpu_has_native_bf16("flags : fpu avx2 avx512f avx512_vnni\n")
    assert not cpu_has_native_bf16("")


def test_precision_auto_picks_bf16_only_on_a_cpu_that_computes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import raglens.embedding as embedding

    monkeypatch.setattr(embedding, "cpu_has_native_bf16", lambda cpuinfo=None: False)
    assert embedding.choose_precision("auto", "cpu") == "fp32"
    assert embedding.choose_precision("bf16", "cpu") == "bf16", "asked for explicitly"
    monkeypatch.setattr(embedding, "cpu_has_native_bf16", lambda cpuinfo=None: True)
    assert embedding.choose_precision(None, "cpu") == "bf16"
    assert embedding.choose_precision("auto", "cuda") == "fp32"
    assert embedding.choose_precision("fp32", "cpu") == "fp32"
    with pytest.raises(BadInputError, match="precision"):
        embedding.choose_precision("fp8", "cpu")
