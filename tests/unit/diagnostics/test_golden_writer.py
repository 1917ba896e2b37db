"""Appending golden cases: what was in the file stays, a question is never written twice, and a failed
write leaves the file as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raglens.diagnostics.golden import GoldenFileError, read_golden
from raglens.diagnostics.golden_writer import CaseRefused, NewCase, append_case, suggested_kind

questions = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1).filter(lambda q: q.strip())


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(prefix=st.binary(max_size=200), question=questions)
def test_what_was_in_the_file_is_a_prefix_of_what_is_there_after(
    tmp_path: Path, prefix: bytes, question: str
) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_bytes(prefix)
    try:
        line = append_case(golden, NewCase(question, ("a.md",), "prose"))
    except CaseRefused:
        assert golden.read_bytes() == prefix  # the prefix held the question already
        return
    data = golden.read_bytes()
    assert data.startswith(prefix)
    added = data[len(prefix) :].decode("utf-8")
    assert added.endswith("\n") and added.count("\n") == (1 if prefix[-1:] in (b"", b"\n") else 2)
    assert json.loads(added.strip()) == {"q": question, "expect": ["a.md"], "kind": "prose"}
    assert line == data.count(b"\n")


def test_the_same_case_twice_is_refused_and_says_its_line(tmp_path: Path) -> None:
    golden = tmp_path / "cases" / "golden.jsonl"
    case = NewCase("how are jobs retried?", ("b.md", "a.md"), "prose")
    assert append_case(golden, case) == 1
    with pytest.raises(CaseRefused, match="line 1 already holds this case"):
        append_case(golden, NewCase("how are jobs retried?", ("a.md", "b.md"), "identifier"))
    with pytest.raises(CaseRefused, match=r"already holds this question, expecting a\.md, b\.md"):
        append_case(golden, NewCase("how are jobs retried?", (), "unanswerable"))
    assert len(read_golden(golden)) == 1


def test_a_broken_line_does_not_stop_a_good_case(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"q": "broken"\n# a comment\n', encoding="utf-8")
    assert append_case(golden, NewCase("nothing answers this", (), "unanswerable")) == 3
    assert golden.read_text(encoding="utf-8").startswith('{"q": "broken"\n# a comment\n')


def test_a_short_write_is_cut_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"q": "kept", "expect": []}\n', encoding="utf-8")
    real_write = os.write

    def half_write(descriptor: int, data: bytes) -> int:
        return real_write(descriptor, data[: len(data) // 2])  # a disk that filled up mid-line

    monkeypatch.setattr(os, "write", half_write)
    with pytest.raises(GoldenFileError, match="cannot write"):
        append_case(golden, NewCase("new", ("a.md",), "prose"))
    assert golden.read_text(encoding="utf-8") == '{"q": "kept", "expect": []}\n'


def test_the_suggested_kind_follows_the_question() -> None:
    assert suggested_kind("anything", negative=True, other_language=False) == "unanswerable"
    assert suggested_kind("drain_pending_jobs", negative=False, other_language=False) == "identifier"
    german = "wie starte ich einen Worker?"
    assert suggested_kind(german, negative=False, other_language=True) == "other-language"
    assert suggested_kind("how are failed jobs retried?", negative=False, other_language=False) == "prose"
