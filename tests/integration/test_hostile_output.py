"""Output that cannot be written and careless input: one line on stderr, the right exit code, nothing lost.

The output tests run raglens as a real process on real pipes, a full device and a closed stdout, since
that is where Python, Rich and the interpreter's exit each handle a failed write their own way.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import raglens.cli.narration
from raglens.cli.main import ExitCode, explorer_config_from, main
from raglens.diagnostics.golden import MAX_QUESTION_CHARS
from raglens.diagnostics.golden_writer import CaseRefused, NewCase, append_case
from raglens.errors import BadInputError, ModelLoadError
from raglens.locations import default_cache_dir
from raglens.model_names import could_be_hub_name
from raglens.vector_cache import CACHE_FILE_NAME, VectorCache
from tests.conftest import REPO_ROOT, SAMPLE_CORPUS

FAKE = ("--embedder-factory", "tests.fakes:HashingEmbedder")
GOLDEN = str(REPO_ROOT / "golden" / "sample_corpus.jsonl")
COMMANDS = {
    "files": ["files", str(SAMPLE_CORPUS), "-q"],
    "search": ["search", str(SAMPLE_CORPUS), "how are failed jobs retried?", "-k", "50", "-q", *FAKE],
    "probe": ["probe", str(SAMPLE_CORPUS), "-q", *FAKE],
    "eval": ["eval", str(SAMPLE_CORPUS), GOLDEN, "-q", *FAKE],
    "cache info": ["cache", "info"],
}
"""Every headless command, quiet, with what makes it run quickly (the hashing fake for a model)."""


def run_raglens(argv: list[str], cache: Path, **popen: Any) -> subprocess.CompletedProcess[str]:
    """Run ``python -m raglens ARGV`` from the repository, its cache in ``cache``, stderr captured."""
    environment = {**os.environ, "RAGLENS_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "raglens", *argv],
        cwd=REPO_ROOT,
        env=environment,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
        **popen,
    )


def one_line(stderr: str) -> str:
    """The single line raglens wrote on stderr (asserting it is one, with no traceback)."""
    assert "Traceback" not in stderr, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("raglens: "), stderr
    return lines[0]


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ITEM 4: output that cannot be written.


@pytest.mark.parametrize("json_output", [False, True], ids=["human", "json"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_pipe_closed_before_the_output_exits_141_quietly(
    tmp_path: Path, command: str, json_output: bool
) -> None:
    """Rich's own handler made a closed pipe exit 1; the README promises 141, as --json had it."""
    argv = [*COMMANDS[command], *(["--json"] if json_output else [])]
    reader, writer = os.pipe()
    os.close(reader)  # the reader is gone before the first byte: every write gets EPIPE
    try:
        completed = run_raglens(argv, tmp_path / "cache", stdout=writer)
    finally:
        os.close(writer)
    assert completed.returncode == ExitCode.PIPE_CLOSED, completed.stderr
    assert "Traceback" not in completed.stderr and "BrokenPipe" not in completed.stderr
    assert "Exception ignored" not in completed.stderr


@pytest.mark.parametrize("json_output", [False, True], ids=["human", "json"])
@pytest.mark.parametrize("command", ["files", "search"])
def test_head_1_on_long_output_exits_141(tmp_path: Path, command: str, json_output: bool) -> None:
    """``raglens … | head -1``: the reader takes a line and goes while raglens still writes."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for number in range(1500):  # files: one line a file; search: 50 hits of long lines
        (corpus / f"note{number:04}.txt").write_text(f"retry note {number} " * 60 + "\n", encoding="utf-8")
    argv = [command, str(corpus), *(["--json"] if json_output else [])]
    if command == "search":
        argv += ["how are jobs retried?", "-k", "50", *FAKE]
    environment = {**os.environ, "RAGLENS_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(REPO_ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "raglens", *argv, "-q"],
        cwd=REPO_ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    try:
        with contextlib.suppress(OSError, AttributeError):  # Linux: a small pipe the output overfills
            fcntl.fcntl(process.stdout.fileno(), fcntl.F_SETPIPE_SZ, 4096)
        first = process.stdout.readline()
        process.stdout.close()
        err = process.stderr.read().decode()
        code = process.wait(timeout=120)
    finally:
        process.kill()
    assert first, err
    assert code == ExitCode.PIPE_CLOSED, err
    assert "Traceback" not in err and "Exception ignored" not in err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("json_output", [False, True], ids=["human", "json"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_full_disk_is_one_line_and_exit_5(tmp_path: Path, command: str, json_output: bool) -> None:
    """``> /dev/full`` printed an ``OSError: [Errno 28]`` traceback (from Rich, or at exit)."""
    argv = [*COMMANDS[command], *(["--json"] if json_output else [])]
    with open("/dev/full", "w") as full:
        completed = run_raglens(argv, tmp_path / "cache", stdout=full)
    assert completed.returncode == ExitCode.OUTPUT_UNWRITABLE == 5
    line = one_line(completed.stderr)
    assert "cannot write the output" in line and "No space left on device" in line


@pytest.mark.parametrize("command", [*COMMANDS, "explorer"])
def test_a_closed_stdout_is_refused_before_anything_is_opened(tmp_path: Path, command: str) -> None:
    """``>&-`` printed nothing and exited 0; and descriptor 1 was free for the next file opened."""
    cache = tmp_path / "cache"
    argv = [str(SAMPLE_CORPUS)] if command == "explorer" else COMMANDS[command]
    completed = run_raglens([*argv, "--cache-dir", str(cache)], cache, preexec_fn=lambda: os.close(1))
    assert completed.returncode == ExitCode.OUTPUT_UNWRITABLE
    assert "stdout is closed" in one_line(completed.stderr)
    assert not cache.exists(), "nothing was opened, the cache least of all"


def test_main_gives_stdout_back_after_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    """main() is called in-process (by tests, by scripts): the guard it wraps stdout in comes off."""
    before = sys.stdout
    assert main(["files", str(SAMPLE_CORPUS), "--json"]) == 0
    assert sys.stdout is before
    assert json.loads(capsys.readouterr().out)["file_count"] == 32


# ITEM 5a: an empty PATH.


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "", "q"],
        ["search", "  ", "q"],
        ["files", ""],
        ["probe", " "],
        ["eval", "", GOLDEN],
        [""],
    ],
    ids=["search", "search-blank", "files", "probe", "eval", "explorer"],
)
def test_an_empty_path_is_refused_not_the_current_folder(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run_main(capsys, *argv)
    assert (code, out) == (2, "")
    assert "PATH is empty" in one_line(err)


def test_the_explorer_config_refuses_an_empty_path_and_golden_file_too(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(BadInputError, match="PATH is empty"):
        explorer_config_from([""])
    with pytest.raises(BadInputError, match="--golden is empty"):
        explorer_config_from([str(SAMPLE_CORPUS), "--golden", ""])
    code, _, err = run_main(capsys, "eval", str(SAMPLE_CORPUS), " ")
    assert code == 2 and "GOLDEN.jsonl is empty" in one_line(err)


# ITEM 5b: an empty cache folder must never mean the user's own cache.


@pytest.fixture
def user_cache_with_vectors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default cache folder (the user's, here in a temporary home) holding three vectors."""
    from raglens.embedding_events import ReadingExtent
    from raglens.fingerprint import ModelFingerprint
    from raglens.vector_cache import ModelCache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv("RAGLENS_CACHE_DIR")
    folder = default_cache_dir()
    assert folder.is_relative_to(tmp_path), "the test must not touch the real user cache"
    with VectorCache.open(folder) as cache:
        fingerprint = ModelFingerprint("a" * 64, "model-a", tmp_path, 128, "fp32", "a" * 64)
        vectors = np.eye(3, 4, dtype=np.float32)
        ModelCache(cache, fingerprint, 4).store(["x", "y", "z"], vectors, [ReadingExtent(1, 1)] * 3)
    return folder


def entries_in(folder: Path) -> int:
    with VectorCache.open(folder) as cache:
        return cache.info().entries


@pytest.mark.parametrize(
    "argv",
    [
        ["cache", "clear"],
        ["cache", "info"],
        ["search", str(SAMPLE_CORPUS), "q", *FAKE],
        ["files", str(SAMPLE_CORPUS)],
        ["probe", str(SAMPLE_CORPUS), *FAKE],
        ["eval", str(SAMPLE_CORPUS), GOLDEN, *FAKE],
        [str(SAMPLE_CORPUS)],
    ],
    ids=["clear", "info", "search", "files", "probe", "eval", "explorer"],
)
@pytest.mark.parametrize("given", ["flag", "environment"])
def test_an_empty_cache_dir_is_refused_and_the_user_cache_kept(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    user_cache_with_vectors: Path,
    argv: list[str],
    given: str,
) -> None:
    """``raglens cache clear --cache-dir "$UNSET_VARIABLE"`` emptied the user's own cache."""
    if given == "flag":
        argv = [*argv, "--cache-dir", ""]
    else:
        monkeypatch.setenv("RAGLENS_CACHE_DIR", "")
    code, out, err = run_main(capsys, *argv)
    assert (code, out) == (2, "")
    line = one_line(err)
    assert ("--cache-dir is empty" if given == "flag" else "$RAGLENS_CACHE_DIR is set but empty") in line
    assert entries_in(user_cache_with_vectors) == 3


# ITEM 5c: a cache folder that is a file, or cannot be made.


@pytest.mark.parametrize("action", ["info", "clear"])
@pytest.mark.parametrize("where", ["a file", "under a file", "an unopenable cache file"])
def test_cache_commands_on_an_unusable_folder_say_why_and_exit_4(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, action: str, where: str
) -> None:
    """They said "empty" or "removed 0 vector(s)" and exited 0."""
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder\n", encoding="utf-8")
    folders = {"a file": a_file, "under a file": a_file / "cache" / "sub"}
    folder = folders.get(where, tmp_path)
    if where == "an unopenable cache file":
        (tmp_path / CACHE_FILE_NAME).mkdir()  # SQLite cannot open a folder
    code, out, err = run_main(capsys, "cache", action, "--cache-dir", str(folder))
    assert (code, out) == (4, "")
    line = one_line(err)
    assert f"could not {'read' if action == 'info' else 'clear'} the cache" in line
    expected = {
        "a file": "is a file, not a folder",
        "under a file": "is a file, so no folder can be made under it",
        "an unopenable cache file": "cannot open the cache",
    }[where]
    assert expected in line
    assert a_file.read_text(encoding="utf-8") == "not a folder\n"


def test_cache_info_on_a_folder_not_made_yet_is_still_empty(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = run_main(capsys, "cache", "info", "--cache-dir", str(tmp_path / "later" / "cache"))
    assert code == 0 and "empty" in out
    assert not (tmp_path / "later").exists()


# ITEM 5d: a runaway question.


def test_a_runaway_golden_question_is_refused_naming_its_line_and_length(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A 51 MB question took 63 s and 6.4 GB and was printed back whole."""
    golden = tmp_path / "golden.jsonl"
    lines = [
        json.dumps({"q": "how are jobs retried?", "expect": ["docs/retries.md"]}),
        json.dumps({"q": "why? " * 1_000_000, "expect": []}),
    ]
    golden.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run_main(capsys, "eval", str(SAMPLE_CORPUS), str(golden), *FAKE)
    assert (code, out) == (2, "")
    line = one_line(err)
    assert "line 2" in line and "5,000,000 characters" in line and f"{MAX_QUESTION_CHARS:,}" in line
    assert len(line) < 400


@pytest.mark.parametrize(
    ("case", "detail"),
    [
        ({"q": "q", "expect": [], "mode": "x" * 1_000_000}, '"mode" must be "all" or "any"'),
        ({"q": "q", "expect": [], "mode": ["all"] * 100_000}, "a JSON list"),
        ({"q": "q", "expect": ["x" * 1_000_000 + ":L0"]}, "lines are numbered from 1"),
        ({"q": "q", "expect": ["::" + "x" * 1_000_000]}, "names no path"),
    ],
    ids=["mode", "mode-list", "line-range", "no-path"],
)
def test_no_golden_error_repeats_a_runaway_string(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, case: dict[str, object], detail: str
) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps(case) + "\n", encoding="utf-8")
    code, _, err = run_main(capsys, "eval", str(SAMPLE_CORPUS), str(golden))
    assert code == 2
    line = one_line(err)
    assert detail in line and "line 1" in line
    assert len(line) < 500


def test_unknown_refs_are_listed_up_to_a_bound(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    cases = [{"q": f"question {n}", "expect": [f"missing/{'x' * 5000}{n}.md"]} for n in range(100)]
    golden.write_text("".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")
    code, _, err = run_main(capsys, "eval", str(SAMPLE_CORPUS), str(golden), "-q", *FAKE)
    assert code == 2
    assert "… and 80 more" in err
    assert len(err) < 20 * 300 + 500


@pytest.mark.parametrize(
    "argv",
    [
        ["search", str(SAMPLE_CORPUS), "x" * (MAX_QUESTION_CHARS + 1)],
        ["probe", str(SAMPLE_CORPUS), "--probe", "x" * (MAX_QUESTION_CHARS + 1)],
        [str(SAMPLE_CORPUS), "x" * (MAX_QUESTION_CHARS + 1)],
    ],
    ids=["search", "probe", "explorer"],
)
def test_a_runaway_query_on_the_command_line_is_refused(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run_main(capsys, *argv)
    assert (code, out) == (2, "")
    line = one_line(err)
    assert f"{MAX_QUESTION_CHARS + 1:,} characters" in line and len(line) < 300


def test_the_explorer_saves_no_case_eval_would_refuse(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    with pytest.raises(CaseRefused, match="at most 4,000"):
        append_case(golden, NewCase("x" * (MAX_QUESTION_CHARS + 1), ("docs/retries.md",), "prose"))
    assert not golden.exists()


# ITEM 5e: an empty query.


@pytest.mark.parametrize(
    "argv",
    [
        ["search", str(SAMPLE_CORPUS), ""],
        ["search", str(SAMPLE_CORPUS), " \t "],
        ["search", str(SAMPLE_CORPUS), "", "--vs", "size=800", *FAKE],
        ["search", str(SAMPLE_CORPUS), "", "--json", *FAKE],
    ],
    ids=["empty", "blank", "vs", "json"],
)
def test_an_empty_query_is_refused_not_ranked(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, err = run_main(capsys, *argv)
    assert (code, out) == (2, "")
    assert "QUERY is empty" in one_line(err)


def test_an_empty_golden_question_or_probe_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"q": "  ", "expect": []}) + "\n", encoding="utf-8")
    code, _, err = run_main(capsys, "eval", str(SAMPLE_CORPUS), str(golden))
    assert code == 2 and '"q" must be a non-empty string' in one_line(err)
    code, _, err = run_main(capsys, "probe", str(SAMPLE_CORPUS), "--probe", " ")
    assert code == 2 and "--probe number 1 is empty" in one_line(err)


# ITEM 5f: a model folder that is not there.


@pytest.mark.parametrize(
    "argv",
    [
        ["--model", "/nonexistent"],
        ["--model", "./no/such/model"],
        ["--model", "bm25", "--vs", "model=/nonexistent"],
        ["--model", str(SAMPLE_CORPUS / "README.md")],
    ],
    ids=["model", "relative", "vs", "a-file"],
)
def test_a_model_path_that_is_not_a_folder_is_raglens_own_one_line(tmp_path: Path, argv: list[str]) -> None:
    """A Hugging Face warning ("Could not resolve the revision of '/nonexistent'") came first."""
    completed = run_raglens(["search", str(SAMPLE_CORPUS), "how are jobs retried?", *argv], tmp_path)
    assert completed.returncode == 2
    line = one_line(completed.stderr)  # refused before anything is read: not even narration comes first
    assert "could not load model" in line
    assert "no such folder" in line or "it is a file" in line


def test_a_model_path_in_a_grid_or_the_explorer_is_refused_before_anything_loads(
    capsys: pytest.CaptureFixture[str],
) -> None:
    grid = ["--grid", "model=all-MiniLM-L6-v2,/nonexistent", "--no-cache"]
    code, out, err = run_main(capsys, "eval", str(SAMPLE_CORPUS), GOLDEN, *grid)
    assert (code, out) == (2, "")
    assert "could not load model '/nonexistent'" in one_line(err)
    with pytest.raises(ModelLoadError, match="no such folder"):
        explorer_config_from([str(SAMPLE_CORPUS), "--model", "/nonexistent"])


@pytest.mark.model
def test_a_hub_name_not_cached_fails_offline_in_one_line_without_trying_the_network(tmp_path: Path) -> None:
    """HF_HUB_OFFLINE was set after huggingface_hub had read it: five retries a file, each one logged."""
    argv = ["search", str(SAMPLE_CORPUS), "q", "-q", "--model", "no-such-owner/no-such-model"]
    completed = run_raglens(argv, tmp_path)
    assert completed.returncode == 2
    line = one_line(completed.stderr)
    assert "could not load model 'no-such-owner/no-such-model'" in line and "offline" in line


def test_hub_names_are_told_from_paths() -> None:
    for name in ("sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2", "BAAI/bge-small-en-v1.5"):
        assert could_be_hub_name(name), name
    for name in ("/nonexistent", "./model", "../model", "~/models/e5", "a/b/c", "a--b", "-a", "a."):
        assert not could_be_hub_name(name), name


# ITEM 5g: progress while a large golden set is scored.


def test_eval_shows_cases_scored_on_a_terminal_while_stdout_goes_to_a_file(tmp_path: Path) -> None:
    """``raglens eval PATH golden.jsonl > out.txt`` showed nothing for the minutes 400k cases take."""
    golden = tmp_path / "golden.jsonl"
    cases = [{"q": f"how are jobs retried {n}?", "expect": ["docs/retries.md"]} for n in range(200)]
    golden.write_text("".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")
    controller, terminal = pty.openpty()
    environment = {**os.environ, "TERM": "xterm-256color", "RAGLENS_CACHE_DIR": str(tmp_path / "cache")}
    slow = ["--embedder-factory", "tests.fakes:SlowQueryHashingEmbedder"]  # 20 ms a query: 4 s in all
    with (tmp_path / "out.txt").open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "raglens", "eval", str(SAMPLE_CORPUS), str(golden), *slow],
            cwd=REPO_ROOT,
            env={**environment, "PYTHONPATH": str(REPO_ROOT)},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=terminal,
        )
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal's last writer closed it
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    assert process.wait(timeout=120) == 0
    text = shown.decode(errors="replace")
    assert "scoring the cases" in text
    assert "/200" in text and " left" in text
    assert "recall@8" in (tmp_path / "out.txt").read_text(encoding="utf-8")


def test_eval_shows_no_case_count_off_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedding bar shows only its last line off a terminal; so does the cases' count."""
    monkeypatch.setattr(raglens.cli.narration, "COUNTED_SHOWN_EVERY", 0.0)
    code, out, err = run_main(capsys, "eval", str(SAMPLE_CORPUS), GOLDEN, *FAKE)
    assert code == 0 and "recall@8" in out
    assert "scoring the cases" not in err
