"""Configuration B and grids from key=value text: inherited values, checked before anything loads."""

from __future__ import annotations

import pytest

from raglens.configuration import RetrievalConfig, grid_configs, parse_grid_axis, parse_vs
from raglens.errors import BadInputError
from raglens.windows import Unit, WindowParams

A = RetrievalConfig(WindowParams(Unit.CHARS, 1000, 200), model=None, max_seq_length=None, precision="fp32")


def test_what_b_does_not_name_is_inherited_from_a() -> None:
    b = parse_vs("size=800,overlap=100", A)
    assert b == RetrievalConfig(WindowParams(Unit.CHARS, 800, 100), None, None, "fp32")
    assert parse_vs("max_seq_length=512", A) == RetrievalConfig(A.params, None, 512, "fp32")
    assert parse_vs("model=/models/bge-small, precision=bf16", A).model == "/models/bge-small"
    assert parse_vs("size=100,overlap=10", A).params == WindowParams(Unit.CHARS, 100, 10), (
        "sizes set together"
    )
    assert parse_vs("size=300", A).params == WindowParams(Unit.CHARS, 300, 200)


def test_a_new_unit_takes_its_own_defaults() -> None:
    assert parse_vs("unit=lines", A).params == WindowParams.for_unit("lines")
    assert parse_vs("unit=words,size=100", A).params == WindowParams.for_unit("words", 100)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("size", "key=value"),
        ("colour=blue", "unknown key 'colour'"),
        ("size=big", "size must be a whole number"),
        ("overlap=1000", "must be smaller than the size"),
        ("precision=int8", "precision must be one of fp32, bf16"),
        ("max_seq_length=0", "at least 1"),
        ("unit=pages", "unknown window unit"),
        ("size=800,size=900", "given twice"),
        ("model=", "needs a model"),
    ],
)
def test_a_bad_spec_is_one_clear_line(spec: str, message: str) -> None:
    with pytest.raises(BadInputError, match=message) as raised:
        parse_vs(spec, A)
    assert "\n" not in str(raised.value)


def test_a_grid_is_every_combination_first_axis_slowest() -> None:
    axes = [parse_grid_axis("size=600,800"), parse_grid_axis("overlap=0,100")]
    configs = grid_configs(A, axes)
    assert [(c.params.size, c.params.overlap) for c in configs] == [
        (600, 0),
        (600, 100),
        (800, 0),
        (800, 100),
    ]
    models = grid_configs(A, [parse_grid_axis("model=a,b"), parse_grid_axis("max_seq_length=256,512")])
    assert [(c.model, c.max_seq_length) for c in models] == [("a", 256), ("a", 512), ("b", 256), ("b", 512)]


def test_a_bad_grid_fails_on_the_combination_that_cannot_be_cut() -> None:
    with pytest.raises(BadInputError, match="overlap=700"):
        grid_configs(A, [parse_grid_axis("size=600,800"), parse_grid_axis("overlap=100,700")])
    for spec in ("size", "colour=1,2", "size=1,,2", "size=1,1"):
        with pytest.raises(BadInputError):
            parse_grid_axis(spec)


def test_a_token_limit_is_part_of_the_fingerprint_only_when_it_is_not_the_model_s_own() -> None:
    from raglens.fingerprint import fingerprint_model

    own = fingerprint_model(None)
    assert own is not None and own.max_seq_length == 256
    same = fingerprint_model(None, max_seq_length=256)
    longer = fingerprint_model(None, max_seq_length=512)
    assert same is not None and longer is not None
    assert same.digest == own.digest, "naming the default limit keeps the cached vectors"
    assert longer.digest != own.digest and longer.max_seq_length == 512
    assert longer.files_digest == own.files_digest, "one ONNX export serves both"
