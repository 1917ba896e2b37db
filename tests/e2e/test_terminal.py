"""raglens in a real terminal: tmux runs it, send-keys types, capture-pane reads the screen."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from raglens.vector_cache import CACHE_FILE_NAME
from tests.conftest import REPO_ROOT, wait_for_cached_vectors

pytestmark = pytest.mark.model

SCREEN_TIMEOUT_S = 180.0

if shutil.which("tmux") is None:
    if os.environ.get("CI"):
        raise RuntimeError("tmux is required in CI; .ci/run installs it")
    pytest.skip("tmux is not installed", allow_module_level=True)


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def session() -> Iterator[str]:
    name = f"raglens-test-{uuid.uuid4().hex[:8]}"
    # Something on the way into tmux can set COLUMNS/LINES to 80x24, and they would override the pane size.
    # The cache folder is named on the command line: a tmux server already running would not pass
    # on this test's environment, and the app would use the developer's own cache.
    cache = shlex.quote(os.environ["RAGLENS_CACHE_DIR"])
    app = f"{sys.executable} -m raglens sample_corpus --cache-dir {cache}"
    command = f"cd {REPO_ROOT} && env -u COLUMNS -u LINES {app}"
    tmux("new-session", "-d", "-s", name, "-x", "150", "-y", "45", command)
    try:
        yield name
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, check=False)


def session_alive(name: str) -> bool:
    checked = subprocess.run(["tmux", "has-session", "-t", name], capture_output=True, check=False)
    return checked.returncode == 0


def screen(name: str) -> str:
    return tmux("capture-pane", "-p", "-t", name)


def wait_for_screen(name: str, condition: Callable[[str], bool], what: str) -> str:
    deadline = time.monotonic() + SCREEN_TIMEOUT_S
    while True:
        shown = screen(name)
        if condition(shown):
            return shown
        if time.monotonic() > deadline:
            size = tmux("display", "-p", "-t", name, "#{window_width}x#{window_height}").strip()
            raise AssertionError(f"no {what} after {SCREEN_TIMEOUT_S} s ({size}); the screen shows:\n{shown}")
        time.sleep(0.1)


def whole_first_frame(shown: str) -> bool:
    """Whether the query box and the status line, the frame's last row, are both drawn.

    tmux can be captured while a frame is still being written, with the rows below some point blank.
    """
    rows = [row for row in shown.splitlines() if row.strip()]
    return "ask a question of the corpus" in shown and bool(rows) and " · k=" in rows[-1]


def test_a_question_typed_in_the_terminal_finds_its_answer(session: str) -> None:
    started = time.monotonic()
    first = wait_for_screen(session, whole_first_frame, "first frame")
    assert time.monotonic() - started < 30, "the first frame must not wait for the model"
    assert "loading" in first or "embedded" in first
    tmux("send-keys", "-t", session, "-l", "what happens after a job is acknowledged?")
    shown = wait_for_screen(
        session, lambda s: "ranked over all 66 windows" in s and "docs/queues.md:L" in s, "ranked hits"
    )
    first_hit = next(line for line in shown.splitlines() if " 1 0." in line)
    assert "docs/queues.md:L" in first_hit
    tmux("send-keys", "-t", session, "C-q")  # Escape then q could arrive as one alt+q sequence
    deadline = time.monotonic() + 20
    while session_alive(session) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not session_alive(session), "ctrl+q quits the app"


def test_sigterm_closes_the_app_cleanly_and_a_restart_resumes(tmp_path: Path) -> None:
    """The terminal is given back, the embedding process goes with the app, the cache is kept."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for number in range(120):
        (corpus / f"note{number:03}.txt").write_text(f"note {number} says " * 120, encoding="utf-8")
    cache, exit_file = tmp_path / "cache", tmp_path / "exit-code"
    fake = "tests.fakes:PacedHashingEmbedder"
    app = f"{sys.executable} -m raglens {corpus} --cache-dir {cache} --embedder-factory {fake}"
    # The shell stays after the app, so its screen shows whether the terminal was restored.
    command = (
        f"cd {REPO_ROOT} && env -u COLUMNS -u LINES PYTHONPATH=. {app}; echo exit=$? > {exit_file}; sleep 60"
    )
    name = f"raglens-test-{uuid.uuid4().hex[:8]}"
    tmux("new-session", "-d", "-s", name, "-x", "150", "-y", "45", command)
    try:
        wait_for_screen(name, lambda s: "embedding" in s or "embedded" in s, "indexing under way")
        (pid,) = subprocess.run(
            ["pgrep", "-f", f"^{re.escape(sys.executable)} -m raglens {re.escape(str(corpus))}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        children = subprocess.run(["pgrep", "-P", pid], capture_output=True, text=True, check=True)
        child_pids = [int(child) for child in children.stdout.split()]
        assert child_pids, "the embedding process runs beside the app"
        wait_for_cached_vectors(int(pid), cache, at_least=32)
        signalled = time.monotonic()
        os.kill(int(pid), signal.SIGTERM)
        while not exit_file.exists():
            assert time.monotonic() - signalled < 10, "the app did not exit within 10 s of SIGTERM"
            time.sleep(0.05)
        assert exit_file.read_text().strip() == "exit=143"
        assert "ask a question of the corpus" not in screen(name), "the app's screen was left behind"
        assert not survivors(child_pids), "a child outlived the app"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, check=False)
    with sqlite3.connect(cache / CACHE_FILE_NAME) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        kept = connection.execute("SELECT count(*) FROM vectors").fetchone()[0]
    assert kept > 0
    search = [sys.executable, "-m", "raglens", "search", str(corpus), "notes", "--json", "-q"]
    search += ["--cache-dir", str(cache), "--embedder-factory", fake]
    resumed = subprocess.run(
        search,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["cache"]["from_cache"] == kept


def family_of(pid: int) -> list[int]:
    """``pid`` and every process below it, read from /proc."""
    family, frontier = [pid], [pid]
    while frontier:
        parent = frontier.pop()
        found = subprocess.run(["pgrep", "-P", str(parent)], capture_output=True, text=True, check=False)
        children = [int(child) for child in found.stdout.split()]
        family += children
        frontier += children
    return family


def survivors(pids: list[int], within_s: float = 5.0) -> list[int]:
    """Those of ``pids`` still running ``within_s`` seconds from now, killed so that no test leaves any."""
    deadline = time.monotonic() + within_s
    while any(Path(f"/proc/{pid}").exists() for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in pids if Path(f"/proc/{pid}").exists()]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


MARK_VARIABLE = "RAGLENS_TEST_MARK"
"""Set in the app's environment, which its embedding process inherits: how a trial finds its processes."""


def marked_processes(mark: str) -> list[int]:
    """Every process whose environment carries ``mark``, whoever its parent is now."""
    wanted = f"{MARK_VARIABLE}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environment = (entry / "environ").read_bytes()
            except OSError:
                continue  # ended meanwhile, or not ours to read
            if wanted in environment.split(b"\0"):
                found.append(int(entry.name))
    return found


def embedding(shown: str) -> bool:
    return "embedded " in shown and "windows embedded" not in shown


def hits_drawn(shown: str) -> bool:
    return "ranked over all" in shown


@dataclass(frozen=True)
class CloseMoment:
    """When, in a trial, the terminal is closed."""

    wait_for: Callable[[str], bool] | None
    """What the screen shows first; None closes it as soon as the app's process exists."""
    steps: tuple[tuple[tuple[str, ...], Callable[[str], bool] | None], ...] = ()
    """Once ``wait_for`` holds: tmux send-keys arguments, each with what the screen shows after them
    (None: go on at once). Escape and a letter sent together can arrive as one alt+letter."""
    real_model: bool = False
    without_sighup: bool = False
    """The app runs in a session of its own (setsid): closing the terminal sends it no SIGHUP."""
    trials: int = 3
    with_b: bool = False
    """Configuration B (``v``) runs too: its windows' vectors share the cache with A's."""


CLOSE_MOMENTS = {
    "before-the-first-frame": CloseMoment(None),
    "at-the-first-frame": CloseMoment(lambda shown: "how are failed jobs retried?" in shown),
    "while-it-embeds": CloseMoment(embedding),
    "while-the-real-model-embeds": CloseMoment(embedding, real_model=True, trials=2),
    "while-ranking": CloseMoment(embedding, steps=((("-l", " and what then?"), None),)),
    "with-a-modal-screen-open": CloseMoment(hits_drawn, steps=((("F1",), lambda shown: "Keys" in shown),)),
    "during-the-failure-lab": CloseMoment(
        hits_drawn,
        steps=(
            (("Escape",), lambda shown: "failure lab" in shown),  # the footer, once the box is left
            (("f",), lambda shown: "running the failure lab" in shown),
        ),
    ),
    "with-the-hits-drawn": CloseMoment(hits_drawn),
    "while-configuration-b-embeds": CloseMoment(
        hits_drawn,
        steps=(
            (("Escape",), lambda shown: "v versus" in shown),
            (("v",), lambda shown: "Compare with configuration B" in shown),
            (("-l", "500"), None),  # the form opens on the size, its value selected
            (("Enter",), lambda shown: "B · 500/200" in shown),
        ),
        with_b=True,
        trials=2,
    ),
    "without-a-sighup": CloseMoment(hits_drawn, without_sighup=True),
}
TRIALS = [(moment, trial) for moment, close in CLOSE_MOMENTS.items() for trial in range(close.trials)]


@pytest.mark.parametrize(("moment", "trial"), TRIALS, ids=[f"{m}-{t}" for m, t in TRIALS])
def test_closing_the_terminal_leaves_no_process_and_a_cache_the_next_start_reuses(
    tmp_path: Path, moment: str, trial: int
) -> None:
    """Closing the terminal (tmux kill-session: SIGHUP, then the terminal is gone) ends the app and its
    embedding process within 5 s, at any moment; what was embedded stays in a whole cache."""
    close = CLOSE_MOMENTS[moment]
    cache, mark = tmp_path / "cache", uuid.uuid4().hex
    fake = "" if close.real_model else "--embedder-factory tests.fakes:PacedHashingEmbedder"
    app = (
        f"{sys.executable} -m raglens sample_corpus 'how are failed jobs retried?' --cache-dir {cache} {fake}"
    )
    session_of_its_own = "setsid -w " if close.without_sighup else ""
    environment = f"env -u COLUMNS -u LINES PYTHONPATH=. {MARK_VARIABLE}={mark}"
    command = f"cd {REPO_ROOT} && exec {session_of_its_own}{environment} {app}"
    name = f"raglens-test-{uuid.uuid4().hex[:8]}"
    tmux("new-session", "-d", "-s", name, "-x", "150", "-y", "45", command)
    try:
        if close.wait_for is None:
            deadline = time.monotonic() + 10
            while not marked_processes(mark) and time.monotonic() < deadline:
                time.sleep(0.005)
        else:
            wait_for_screen(name, close.wait_for, moment)
            for keys, shown_after in close.steps:
                tmux("send-keys", "-t", name, *keys)
                if shown_after is not None:
                    wait_for_screen(name, shown_after, f"{moment}, after {keys}")
        assert marked_processes(mark), "the app is running"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, check=False)
    # Found again after the close: a process started meanwhile (the embedding process, at first) counts.
    assert not survivors(marked_processes(mark)), f"processes outlived the closed terminal ({moment})"
    if not (cache / CACHE_FILE_NAME).exists():
        return  # closed before anything was embedded
    with sqlite3.connect(cache / CACHE_FILE_NAME) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        kept = connection.execute("SELECT count(*) FROM vectors").fetchone()[0]
    if close.real_model or kept == 0:
        return  # the real model's start-up costs seconds; the fake one proves the same code path
    search = [sys.executable, "-m", "raglens", "search", "sample_corpus", "q", "--json", "-q"]
    search += ["--cache-dir", str(cache), "--embedder-factory", "tests.fakes:PacedHashingEmbedder"]
    environment_of_search = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    resumed = subprocess.run(search, cwd=REPO_ROOT, env=environment_of_search, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    reused = json.loads(resumed.stdout)["cache"]["from_cache"]
    if close.with_b:  # B's vectors are there too, for B's windows
        assert 0 < reused <= kept, "the next start reuses A's vectors"
    else:
        assert reused == kept, "the next start reuses every vector"


def test_sigkill_of_the_app_takes_its_embedding_process_down(tmp_path: Path) -> None:
    """The embedding process asks Linux to kill it when its parent dies, so no model is left in memory."""
    fake = "tests.fakes:PacedHashingEmbedder"
    app = f"{sys.executable} -m raglens sample_corpus --cache-dir {tmp_path} --embedder-factory {fake}"
    name = f"raglens-test-{uuid.uuid4().hex[:8]}"
    tmux(
        "new-session",
        "-d",
        "-s",
        name,
        "-x",
        "150",
        "-y",
        "45",
        f"cd {REPO_ROOT} && exec env PYTHONPATH=. {app}",
    )
    try:
        wait_for_screen(name, lambda shown: "embedded " in shown, "indexing under way")
        pid = int(tmux("list-panes", "-t", name, "-F", "#{pane_pid}").strip())
        family = family_of(pid)
        assert len(family) >= 2, "the embedding process runs beside the app"
        os.kill(pid, signal.SIGKILL)
        assert not survivors(family), "the embedding process outlived the killed app"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, check=False)
