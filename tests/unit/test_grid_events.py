"""The eval grid's events: every event survives a JSON line, and a line that is not one is refused."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raglens.diagnostics.char_overlap import CharacterSummary
from raglens.errors import BadInputError
from raglens.grid_events import (
    GridCase,
    GridEvent,
    GridFailed,
    GridFinished,
    GridRowDone,
    GridStarted,
    KindFigures,
    RowFigures,
    decode,
    encode,
)

counts = st.integers(min_value=0, max_value=10**12)
shares = st.none() | st.floats(allow_nan=False, allow_infinity=False)
words = st.text(max_size=40)
kinds = st.builds(KindFigures, words, counts, counts, shares, shares, shares, shares)
rows = st.builds(
    RowFigures,
    config=words,
    unit=words,
    size=counts,
    overlap=counts,
    model=words,
    model_argument=st.none() | words,
    score_scale=st.sampled_from(["cosine", "bm25"]),
    max_seq_length=st.none() | counts,
    precision=words,
    recall=shares,
    mrr=shares,
    ndcg=shares,
    characters=st.builds(CharacterSummary, counts, shares, shares, shares),
    kinds=st.lists(kinds, max_size=4).map(tuple),
    suggested_floor=shares,
    separable=st.none() | st.booleans(),
    unread_share=shares,
    embedded=counts,
    from_cache=counts,
)
events: st.SearchStrategy[GridEvent] = st.one_of(
    st.builds(GridStarted, counts, counts, words, st.none() | counts),
    st.builds(GridRowDone, counts, counts, rows),
    st.builds(
        GridFinished,
        st.text(),
        st.lists(
            st.builds(
                GridCase,
                counts,
                st.text(),
                st.lists(words, max_size=3).map(tuple),
                st.lists(words, max_size=3).map(tuple),
            ),
            max_size=3,
        ).map(tuple),
    ),
    st.builds(GridFailed, st.text()),
)

A_ROW = RowFigures(
    "500/0 chars · all-MiniLM-L6-v2",
    "chars",
    500,
    0,
    "all-MiniLM-L6-v2",
    None,
    "cosine",
    256,
    "fp32",
    0.75,
    0.5,
    0.61,
    CharacterSummary(2, 0.9, 0.25, 0.24),
    (KindFigures("en", 4, 0, 0.75, 0.5, None, 0.6), KindFigures("negative", 0, 2, None, None, 0.5, None)),
    0.41,
    True,
    0.02,
    120,
    0,
)


@given(events)
def test_every_event_survives_its_line(event: GridEvent) -> None:
    line = encode(event)
    assert "\n" not in line and "\r" not in line and line.isascii()
    assert decode(line) == event
    assert decode(line + "\n") == event


def test_each_line_names_its_type_first() -> None:
    examples = [GridStarted(2, 4, "x", 10), GridRowDone(2, 4, A_ROW), GridFinished("table"), GridFailed("no")]
    tags = [next(iter(json.loads(encode(event)))) for event in examples]
    assert tags == ["type"] * 4
    assert [json.loads(encode(event))["type"] for event in examples] == [
        "started",
        "row_done",
        "finished",
        "failed",
    ]


def test_a_whole_number_is_accepted_for_a_share() -> None:
    line = encode(GridRowDone(1, 1, A_ROW)).replace('"recall": 0.75', '"recall": 1')
    event = decode(line)
    assert isinstance(event, GridRowDone) and event.row.recall == 1.0
    assert isinstance(event.row.recall, float)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
field_names = st.sampled_from(
    ["number", "total", "config", "seconds_left", "row", "report", "message", "kinds", "kind", "recall"]
)
near_events = st.builds(
    lambda tag, fields: json.dumps({"type": tag, **fields}),
    st.sampled_from(["started", "row_done", "finished", "failed", "other"]),
    st.dictionaries(field_names, json_values, max_size=6),
)


@given(st.text() | json_values.map(json.dumps) | near_events | st.just("[" * 100_000))
def test_any_line_is_an_event_or_a_bad_input_error(line: str) -> None:
    try:
        event = decode(line)
    except BadInputError as error:
        assert str(error).startswith("not an eval grid event (")
    else:
        assert decode(encode(event)) == event


def test_a_number_too_large_for_a_share_is_refused() -> None:
    line = encode(GridRowDone(1, 1, A_ROW)).replace('"recall": 0.75', f'"recall": {10**400}')
    with pytest.raises(BadInputError, match=r"row_done\.row\.recall is out of range"):
        decode(line)


STARTED = {"type": "started", "number": 1, "total": 2, "config": "c", "seconds_left": None}


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("", "Expecting value"),
        ("-> grid 2/4: 500/0 chars; about 10 s left at the pace so far", "Expecting value"),
        ('{"type": "started"', "Expecting"),
        ("[1, 2]", "not a JSON object"),
        ('"started"', "not a JSON object"),
        (json.dumps({**STARTED, "type": "paused"}), "type 'paused' is none of"),
        (json.dumps({key: value for key, value in STARTED.items() if key != "type"}), "type None"),
        (json.dumps({key: value for key, value in STARTED.items() if key != "total"}), "no total"),
        (json.dumps({**STARTED, "colour": "red"}), "unknown field 'colour'"),
        (json.dumps({**STARTED, "number": "1"}), "started.number should be int"),
        (json.dumps({**STARTED, "number": 1.0}), "started.number should be int"),
        (json.dumps({**STARTED, "number": True}), "started.number should be int"),
        (json.dumps({**STARTED, "config": None}), "started.config should be str"),
        ('{"type": "failed", "message": NaN}', "NaN"),
        ('{"type": "started", "number": 1, "total": 1e999, "config": "c", "seconds_left": null}', "1e999"),
        ('{"type": "finished", "report": ["a"], "cases": [], "best": null}', "finished.report should be str"),
        ('{"type": "row_done", "number": 1, "total": 1, "row": []}', "row_done.row should be an object"),
    ],
)
def test_a_line_that_is_not_an_event_is_refused_with_the_reason_and_the_line(line: str, why: str) -> None:
    with pytest.raises(BadInputError, match="not an eval grid event") as raised:
        decode(line)
    assert why in str(raised.value)
    assert repr(line[:200]) in str(raised.value) or len(line) > 200


def test_a_bad_figure_deep_in_a_row_is_named_by_its_path() -> None:
    document = json.loads(encode(GridRowDone(1, 2, A_ROW)))
    document["row"]["kinds"][1]["negatives"] = "two"
    with pytest.raises(BadInputError, match=r"row_done\.row\.kinds\[1\]\.negatives should be int"):
        decode(json.dumps(document))
    document["row"]["kinds"] = {"en": 1}
    with pytest.raises(BadInputError, match=r"row_done\.row\.kinds should be a list"):
        decode(json.dumps(document))


def test_a_long_line_is_quoted_only_in_part() -> None:
    with pytest.raises(BadInputError) as raised:
        decode("x" * 10_000)
    assert len(str(raised.value)) < 400


def test_a_figure_json_cannot_carry_is_refused_when_encoding() -> None:
    with pytest.raises(ValueError, match="JSON compliant"):
        encode(GridRowDone(1, 1, replace(A_ROW, recall=float("nan"))))
