"""The headless CLI on a hostile corpus: every file accounted for, no traceback, no raw control byte.

The fake model keeps this fast; the real model runs the same pipeline in test_cli and test_real_model.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from raglens.cli.main import main
from tests.hostile import INDEXED, build_hostile_corpus

FAKE = ["--embedder-factory", "tests.fakes:HashingEmbedder"]
_RAW_CONTROL = re.compile(
    rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]"
)
"""C0 controls but tab and line feed, DEL, C1 controls and bidi overrides, as UTF-8 bytes."""


def assert_inert(data: bytes, what: str) -> None:
    found = _RAW_CONTROL.search(data)
    assert found is None, f"{what} holds a raw control byte {found.group()!r} at {found.start()}"


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root, outside = tmp_path / "hostile", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    return root, build_hostile_corpus(root, outside)


def run(capfdbinary: pytest.CaptureFixture[bytes], *argv: str) -> tuple[int, bytes, bytes]:
    code = main(list(argv))
    captured = capfdbinary.readouterr()
    return code, captured.out, captured.err


def test_files_accounts_for_every_file_with_its_reason(
    capfdbinary: pytest.CaptureFixture[bytes], hostile: tuple[Path, dict[str, str]]
) -> None:
    root, expected = hostile
    code, out, err = run(capfdbinary, "files", str(root), "--json")
    assert code == 0, err
    assert_inert(out, "files --json")
    document = json.loads(out)
    seen = {entry["path"]: INDEXED for entry in document["files"]}
    seen |= {entry["path"]: entry["reason"] for entry in document["skipped"]}
    assert seen == expected
    assert all(entry["detail"] for entry in document["skipped"]), "every skip says why"
    code, out, err = run(capfdbinary, "files", str(root))
    assert code == 0
    assert_inert(out, "files")
    for path, outcome in expected.items():
        if outcome != INDEXED:
            assert path.encode() in out, f"{path} ({outcome}) is not listed"


def test_line_numbers_count_crlf_and_lone_cr(
    capfdbinary: pytest.CaptureFixture[bytes], hostile: tuple[Path, dict[str, str]]
) -> None:
    root, _ = hostile
    code, out, err = run(capfdbinary, "search", str(root), "three", "-k", "500", "--json", "-q", *FAKE)
    assert code == 0, err
    hits = {hit["path"]: hit for hit in json.loads(out)["hits"]}
    for path in ("crlf.txt", "lone_cr.txt"):
        assert (hits[path]["line_start"], hits[path]["line_end"]) == (1, 3)
        assert hits[path]["citation"] == f"{path}:L1-L3"


@pytest.mark.parametrize("json_mode", [False, True])
def test_search_probe_and_eval_survive_and_stay_inert(
    capfdbinary: pytest.CaptureFixture[bytes],
    hostile: tuple[Path, dict[str, str]],
    tmp_path: Path,
    json_mode: bool,
) -> None:
    root, _ = hostile
    as_json = ["--json"] if json_mode else []
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        '{"q": "clipboard title bell", "expect": ["terminal_attack.md"]}\n{"q": "orchids", "expect": []}\n',
        encoding="utf-8",
    )
    commands = [
        ["search", str(root), "clear the screen and set the title", "-k", "8", "--prompt"],
        ["probe", str(root), "--probe", "\x1b[2J[bold]markup[/]"],
        ["eval", str(root), str(golden)],
    ]
    for command in commands:
        code, out, err = run(capfdbinary, *command, *as_json, *FAKE)
        assert code == 0, err
        assert b"Traceback" not in err
        assert_inert(out, f"{command[0]} stdout")
        assert_inert(err, f"{command[0]} stderr")
        if json_mode:
            json.loads(out)
    code, out, _ = run(capfdbinary, "search", str(root), "clipboard", "-k", "500", *as_json, *FAKE)
    assert b"terminal_attack.md" in out
    assert (b"\\u001b" if json_mode else "␛".encode()) in out  # shown, escaped, never raw


def test_inside_a_git_work_tree_the_same_files_are_indexed(
    capfdbinary: pytest.CaptureFixture[bytes], hostile: tuple[Path, dict[str, str]]
) -> None:
    root, expected = hostile
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    code, out, err = run(capfdbinary, "files", str(root), "--json")
    assert code == 0, err
    document = json.loads(out)
    assert document["listing"] == "git"
    assert {entry["path"] for entry in document["files"]} == {p for p, o in expected.items() if o == INDEXED}
    reasons = {entry["path"]: entry["reason"] for entry in document["skipped"]}
    assert reasons["drop.secret"] == reasons["sub/local.txt"] == "ignored"
    assert reasons["huge.log"] == "too large" and reasons["bundle.js"] == "generated"


def test_nothing_is_written_inside_the_corpus(
    capfdbinary: pytest.CaptureFixture[bytes], hostile: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    root, _ = hostile

    def snapshot() -> dict[str, tuple[int, int]]:
        return {
            str(path.relative_to(root)): (path.lstat().st_size, path.lstat().st_mtime_ns)
            for path in sorted(root.rglob("*"))
        }

    before = snapshot()
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"q": "notes", "expect": ["many/note_0001.txt"]}\n', encoding="utf-8")
    for command in (
        ["files", str(root)],
        ["search", str(root), "small note", *FAKE],
        ["probe", str(root), *FAKE],
        ["eval", str(root), str(golden), *FAKE],
    ):
        code, _, err = run(capfdbinary, *command)
        assert code == 0, err
    assert snapshot() == before
