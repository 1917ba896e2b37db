"""Configuration B and grids from key=value text: inherited values, checked before anything loads."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raglens.configuration import (
    KEYS,
    GridAxis,
    RetrievalConfig,
    config_from_fields,
    grid_configs,
    parse_grid_axis,
    parse_k,
    parse_max_seq_length,
    parse_model,
    parse_overlap,
    parse_precision,
    parse_size,
    parse_unit,
    parse_vs,
    quote_value,
    split_axes,
    split_pairs,
    split_values,
)
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


@pytest.mark.parametrize(
    ("parse", "text", "value"),
    [
        (parse_unit, "lines", Unit.LINES),
        (parse_unit, " words ", Unit.WORDS),
        (parse_size, "800", 800),
        (parse_size, " 1 ", 1),
        (parse_overlap, "0", 0),
        (parse_overlap, "100", 100),
        (parse_model, "/models/e5,small", "/models/e5,small"),
        (parse_model, " all-MiniLM-L6-v2 ", "all-MiniLM-L6-v2"),
        (parse_max_seq_length, "512", 512),
        (parse_precision, "bf16", "bf16"),
        (parse_precision, "fp32", "fp32"),
        (parse_k, "8", 8),
    ],
)
def test_each_field_parser_gives_the_typed_value(
    parse: Callable[[str], object], text: str, value: object
) -> None:
    assert parse(text) == value


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (parse_unit, "pages", "unknown window unit 'pages'; choose one of chars, words, lines"),
        (parse_size, "abc", "size must be a whole number, got 'abc'"),
        (parse_size, "", "size must be a whole number, got ''"),
        (parse_size, "0", "size must be at least 1, got 0"),
        (parse_overlap, "1.5", "overlap must be a whole number, got '1.5'"),
        (parse_overlap, "-1", "overlap must be at least 0, got -1"),
        (parse_model, "  ", "model needs a model name or folder, got '  '"),
        (parse_max_seq_length, "many", "max_seq_length must be a whole number, got 'many'"),
        (parse_max_seq_length, "0", "max_seq_length must be at least 1, got 0"),
        (parse_precision, "int8", "precision must be one of fp32, bf16, got 'int8'"),
        (parse_k, "abc", "k must be a whole number, got 'abc'"),
        (parse_k, "0", "k must be at least 1, got 0"),
    ],
)
def test_each_field_parser_refuses_with_one_message(
    parse: Callable[[str], object], text: str, message: str
) -> None:
    with pytest.raises(BadInputError) as raised:
        parse(text)
    assert str(raised.value) == message


def test_config_from_fields_inherits_what_is_not_given_and_sets_the_sizes_together() -> None:
    assert config_from_fields(A, {}) == A
    assert config_from_fields(A, {"size": "100", "overlap": "10"}).params == WindowParams(Unit.CHARS, 100, 10)
    assert config_from_fields(A, {"unit": "words"}).params == WindowParams.for_unit("words")
    assert config_from_fields(A, {"unit": "chars", "size": "300"}).params == WindowParams(
        Unit.CHARS, 300, 200
    )
    b = config_from_fields(A, {"model": "/models/e5,small", "max_seq_length": "128"})
    assert b == RetrievalConfig(A.params, "/models/e5,small", 128, "fp32")
    with pytest.raises(BadInputError, match="unknown key 'colour'"):
        config_from_fields(A, {"colour": "blue"})
    with pytest.raises(BadInputError, match=r"^window overlap \(200\) must be smaller than the size \(100\)"):
        config_from_fields(A, {"size": "100"})


def test_a_model_with_a_comma_is_quoted_in_vs_and_grid() -> None:
    b = parse_vs('model="/models/e5,small",size=500', A)
    assert b == RetrievalConfig(WindowParams(Unit.CHARS, 500, 200), "/models/e5,small", None, "fp32")
    assert parse_vs('model = "/models/e5,small" , precision=bf16', A).model == "/models/e5,small"
    assert parse_vs('model="say ""hi"""', A).model == 'say "hi"'
    axis = parse_grid_axis('model=all-MiniLM-L6-v2,"/models/e5,small"')
    assert axis == GridAxis("model", ("all-MiniLM-L6-v2", "/models/e5,small"))
    # The bundled model named by its name is the bundled model (None), which works offline.
    assert [c.model for c in grid_configs(A, [axis])] == [None, "/models/e5,small"]
    assert axis.spec() == 'model=all-MiniLM-L6-v2,"/models/e5,small"'
    assert parse_grid_axis(axis.spec()) == axis


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ('model="/models/e5,small', "--vs 'model=\"/models/e5,small': a double quote is not closed"),
        ('model=/models/"e5",size=1', "quote a whole value"),
        ('model="/models/e5" small', "quote a whole value"),
    ],
)
def test_a_bad_quote_in_vs_is_one_clear_line(spec: str, message: str) -> None:
    with pytest.raises(BadInputError) as raised:
        parse_vs(spec, A)
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_a_bad_quote_in_grid_is_one_clear_line() -> None:
    with pytest.raises(BadInputError, match="--grid 'model=a,\"b': a double quote is not closed"):
        parse_grid_axis('model=a,"b')
    with pytest.raises(BadInputError, match="an empty value"):
        parse_grid_axis('model=a,""')
    with pytest.raises(BadInputError, match="given twice"):
        parse_grid_axis('model=a,"a"')


def test_a_grid_combination_that_fails_is_named_with_its_quotes() -> None:
    axes = [parse_grid_axis('model="/models/e5,small"'), parse_grid_axis("max_seq_length=0")]
    with pytest.raises(BadInputError) as raised:
        grid_configs(A, axes)
    assert str(raised.value) == (
        '--grid model="/models/e5,small",max_seq_length=0: max_seq_length must be at least 1, got 0'
    )


spec_keys = st.from_regex(r"[a-z_]{1,12}", fullmatch=True)


@given(st.text())
def test_quote_value_leaves_a_plain_value_as_it_is(value: str) -> None:
    quoted = quote_value(value)
    plain = bool(value) and not any(c in ',"' or c.isspace() for c in value)
    assert (quoted == value) == plain


@given(st.lists(st.tuples(spec_keys, st.text()), min_size=1))
def test_quoted_pairs_come_back_from_the_tokenizer_as_they_were(pairs: list[tuple[str, str]]) -> None:
    spec = ",".join(f"{key}={quote_value(value)}" for key, value in pairs)
    assert split_pairs(spec, "--vs") == pairs


@given(st.lists(st.text(), min_size=1))
def test_quoted_values_come_back_from_the_tokenizer_as_they_were(values: list[str]) -> None:
    assert split_values(",".join(quote_value(value) for value in values), "--grid") == values


@given(st.lists(st.tuples(st.sampled_from(KEYS), st.lists(st.text(min_size=1), min_size=1, unique=True))))
def test_grid_axes_come_back_through_spec_and_the_form_s_split(axes: list[tuple[str, list[str]]]) -> None:
    grid = [GridAxis(key, tuple(values)) for key, values in axes]
    assert [parse_grid_axis(axis.spec()) for axis in grid] == grid
    assert [parse_grid_axis(spec) for spec in split_axes(" ".join(axis.spec() for axis in grid))] == grid
