"""Every place the headless CLI shows a path, walked with file names built to attack it.

Names hold escape sequences, markup, newlines, tabs, bidi overrides and bytes that are not UTF-8.
Each command runs in a child with a strict UTF-8 stdout (as a real ``en_US.UTF-8`` terminal has):
nothing may crash, drive the terminal or split a line, and JSON stays valid UTF-8 that gives each
name's bytes back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from raglens.printable import printable_name
from tests.conftest import REPO_ROOT
from tests.integration.test_hostile_corpus import FAKE, assert_inert

HOSTILE_NAMES = [
    b"[x=1:2].md",
    b"[@click=app.quit]CLICK.md",
    b"\x1b]2;TITLE\x07\x1b[2Jtitle.md",
    b"two\nlines.md",
    b"tab\there.md",
    b"cr\rname.md",
    b"bidi\xe2\x80\xaeevil.md",
    b"bad\xff\x9b.md",
]


def _name(raw: bytes) -> str:
    return os.fsdecode(raw)


@pytest.fixture
def hostile_names(tmp_path: Path) -> Path:
    root = tmp_path / "names"
    root.mkdir()
    for number, raw in enumerate(HOSTILE_NAMES):
        (root / _name(raw)).write_text(f"note {number} about the lighthouse keeper's log\n", encoding="utf-8")
    return root


def run_strict(*argv: str, cache: Path) -> tuple[int, bytes, bytes]:
    """``raglens ARGV`` in a child whose stdout and stderr refuse anything but valid UTF-8."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict", "RAGLENS_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-m", "raglens", *argv], capture_output=True, env=env, cwd=REPO_ROOT, timeout=120
    )
    return done.returncode, done.stdout, done.stderr


def checked(result: tuple[int, bytes, bytes], command: str, code: int = 0) -> tuple[str, str]:
    returned, out, err = result
    assert b"Traceback" not in err, f"{command}: {err.decode('utf-8', 'replace')}"
    assert returned == code, f"{command} exited {returned}: {err.decode('utf-8', 'replace')}"
    assert_inert(out, f"{command} stdout")
    assert_inert(err, f"{command} stderr")
    return out.decode("utf-8"), err.decode("utf-8")  # strict: raises on anything that is not UTF-8


def paths_in(document: Any) -> set[bytes]:
    """The bytes of every "path" value anywhere in a JSON document."""
    found: set[bytes] = set()
    if isinstance(document, dict):
        for key, value in document.items():
            if key == "path" and isinstance(value, str):
                found.add(os.fsencode(value))
            else:
                found |= paths_in(value)
    elif isinstance(document, list):
        for value in document:
            found |= paths_in(value)
    return found


def test_every_command_shows_hostile_names_inert_on_one_line(hostile_names: Path, tmp_path: Path) -> None:
    cache, root = tmp_path / "cache", str(hostile_names)
    shown = [printable_name(_name(raw)) for raw in HOSTILE_NAMES]
    for line in shown:
        assert "\n" not in line

    out, _ = checked(run_strict("files", root, cache=cache), "files")
    for name in shown:
        assert name in out, f"files does not list {name!r} on one line"
    out, _ = checked(run_strict("files", root, "--json", cache=cache), "files --json")
    assert paths_in(json.loads(out)) == set(HOSTILE_NAMES)

    everything = ["-k", str(len(HOSTILE_NAMES)), *FAKE]
    out, _ = checked(run_strict("search", root, "lighthouse keeper", *everything, cache=cache), "search")
    for name in shown:
        assert f"{name}:L1-L1" in out, f"search does not cite {name!r} on one line"
    out, _ = checked(
        run_strict("search", root, "log", "--prompt", *everything, cache=cache), "search --prompt"
    )
    for name in shown:
        assert name in out
    out, _ = checked(run_strict("search", root, "log", "--json", *everything, cache=cache), "search --json")
    hits = json.loads(out)["hits"]
    assert {os.fsencode(hit["path"]) for hit in hits} == set(HOSTILE_NAMES)
    for hit in hits:
        assert os.fsencode(hit["citation"]) == os.fsencode(hit["path"]) + b":L1-L1"

    out, _ = checked(run_strict("probe", root, "--probe", "keeper", *FAKE, cache=cache), "probe")
    out, _ = checked(
        run_strict("probe", root, "--probe", "keeper", "--json", *FAKE, cache=cache), "probe --json"
    )
    json.loads(out)

    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        "".join(
            json.dumps({"q": "lighthouse keeper", "expect": [_name(raw)]}, ensure_ascii=True) + "\n"
            for raw in HOSTILE_NAMES
        ),
        encoding="utf-8",
    )
    out, _ = checked(run_strict("eval", root, str(golden), *FAKE, cache=cache), "eval")
    out, _ = checked(run_strict("eval", root, str(golden), "--json", *FAKE, cache=cache), "eval --json")
    json.loads(out)

    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(
        json.dumps({"q": "x", "expect": ["\x1b]2;TITLE\x07\udcffgone\n.md"]}) + "\n", encoding="utf-8"
    )
    _, err = checked(run_strict("eval", root, str(unknown), *FAKE, cache=cache), "eval unknown ref", code=2)
    assert "␛]2;TITLE␇\\xffgone␊.md is not an indexed file" in err


def test_nothing_indexable_names_the_skipped_files_inert(tmp_path: Path) -> None:
    root = tmp_path / "binary_only"
    root.mkdir()
    (root / _name(b"\x1b]2;TITLE\x07\x1b[2J\xffbin.dat")).write_bytes(b"\x00\x01\x02")
    for command in (["files", str(root)], ["search", str(root), "anything", *FAKE]):
        _, err = checked(run_strict(*command, cache=tmp_path / "cache"), command[0], code=3)
        assert "nothing indexable" in err and "␛]2;TITLE␇␛[2J\\xffbin.dat: binary" in err
