from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raglens.diagnostics.golden import ExpectedRef, GoldenFileError, parse_golden_line, read_golden


def test_a_golden_file_with_comments_blank_lines_and_every_field(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        "# comment\n\n"
        '{"q": "where is x?", "expect": ["./src/a.py::Cls.method", "docs/b.md"], '
        '"mode": "any", "kind": "symbol"}\n'
        '{"q": "off topic", "expect": []}\n',
        encoding="utf-8",
    )
    first, second = read_golden(golden)
    assert first.line == 3
    assert first.expect == (ExpectedRef("src/a.py", "Cls.method"), ExpectedRef("docs/b.md"))
    assert first.mode == "any" and first.kind == "symbol"
    assert second.is_negative and second.kind == "unanswerable" and second.mode == "all"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"q": "x"', "line 4: "),
        ('["q"]', "expected a JSON object"),
        ('{"expect": []}', '"q" must be a non-empty string'),
        ('{"q": "x"}', '"expect" must be a list'),
        ('{"q": "x", "expect": [1]}', '"expect" must be a list'),
        ('{"q": "x", "expect": ["a.py"], "mode": "some"}', '"mode" must be "all" or "any"'),
        ('{"q": "x", "expect": ["a.py::"]}', "no symbol after it"),
        ('{"q": "x", "expect": ["::f"]}', "names no path"),
    ],
)
def test_a_bad_line_is_an_error_naming_its_line(line: str, message: str) -> None:
    with pytest.raises(GoldenFileError, match="line 4: ") as raised:
        parse_golden_line(line, 4)
    assert message in str(raised.value)


def test_an_unreadable_or_empty_golden_file(tmp_path: Path) -> None:
    with pytest.raises(GoldenFileError, match="cannot read golden file"):
        read_golden(tmp_path / "missing.jsonl")
    (tmp_path / "empty.jsonl").write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(GoldenFileError, match="holds no cases"):
        read_golden(tmp_path / "empty.jsonl")
    (tmp_path / "latin1.jsonl").write_bytes(b'{"q": "caf\xe9", "expect": []}\n')
    with pytest.raises(GoldenFileError, match="not UTF-8"):
        read_golden(tmp_path / "latin1.jsonl")


@given(st.text(max_size=200))
def test_parsing_any_line_raises_nothing_but_the_projects_error(line: str) -> None:
    with contextlib.suppress(GoldenFileError):
        parse_golden_line(line, 1)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10),
        lambda c: (
            st.lists(c, max_size=3)
            | st.dictionaries(st.sampled_from(["q", "expect", "mode", "kind", "x"]), c, max_size=4)
        ),
    )
)
def test_parsing_any_json_value_raises_nothing_but_the_projects_error(value: object) -> None:
    import json

    with contextlib.suppress(GoldenFileError):
        parse_golden_line(json.dumps(value), 1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("src/a.py:L3-L9", ExpectedRef("src/a.py", None, (3, 9))),
        ("src/a.py:L4", ExpectedRef("src/a.py", None, (4, 4))),
        ("./docs\\b.md:L1-L1", ExpectedRef("docs/b.md", None, (1, 1))),
        ("notes:Lx", ExpectedRef("notes:Lx")),
    ],
)
def test_a_line_range_is_written_as_raglens_cites_a_window(text: str, expected: ExpectedRef) -> None:
    ref = ExpectedRef.parse(text)
    assert ref == expected
    assert ExpectedRef.parse(str(ref)) == ref
    assert ref.is_whole_file == (ref.lines is None)


@pytest.mark.parametrize(
    ("text", "message"),
    [("a.py:L0-L3", "numbered from 1"), ("a.py:L9-L3", "ends before it starts")],
)
def test_a_line_range_that_cannot_be_is_refused_with_its_reason(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ExpectedRef.parse(text)
