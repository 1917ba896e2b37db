"""raglens in a real terminal: tmux runs it, send-keys types, capture-pane reads the screen."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator

import pytest

from tests.conftest import REPO_ROOT

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


def test_a_question_typed_in_the_terminal_finds_its_answer(session: str) -> None:
    started = time.monotonic()
    first = wait_for_screen(session, lambda s: "ask a question of the corpus" in s, "first frame")
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
