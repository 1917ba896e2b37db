"""Measure how the explorer feels: first frame, event-loop stalls while indexing, keystroke to hits.

Usage: uv run python benchmarks/app_responsiveness.py [PATH]   (default: this repository)
Needs tmux for the figures from a real terminal: a bare Textual app's first frame (the floor, measured
alongside), raglens's first frame, and a warm launch's hits over every window. Numbers vary on shared
machines; compare them with the floor of the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from textual.widgets import Input

from raglens.run import EngineSettings
from raglens.ui.app import RaglensApp
from raglens.ui.app_config import AppConfig

REPO_ROOT = Path(__file__).resolve().parent.parent
QUERIES = ("what happens after a job is acknowledged?", "how are windows cut?", "drain_pending_jobs")


BARE_APP = """
from textual.app import App
from textual.widgets import Input

class Bare(App):
    def compose(self):
        yield Input(placeholder="ask a question of the corpus")

Bare().run()
"""
"""The floor: a Textual app with one input, nothing else."""


ESCAPE_SEQUENCE = re.compile(
    rb"\x1b\[[0-9;?<>=$]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]"
)
"""CSI, OSC and charset sequences: what separates the characters a terminal shows in its output."""


def seconds_until_on_screen(command: str, marker: str, runs: int = 3) -> list[float]:
    """Seconds from starting ``command`` in a 150x45 tmux pane until it writes ``marker`` to the pane.

    The pane's output is piped to a file that this process reads every 2 ms, escape sequences
    removed: polling ``tmux capture-pane`` instead took a process start every few milliseconds, a
    good part of one of this machine's two cores, and slowed what it measured. The command waits
    for Enter, so the clock starts with the command itself, not with tmux's shell.
    """
    timings = []
    for _ in range(runs):
        name = f"raglens-bench-{uuid.uuid4().hex[:6]}"
        with tempfile.TemporaryDirectory() as folder:
            output = Path(folder) / "pane.out"
            output.touch()
            size = ["-x", "150", "-y", "45"]
            start_session(["new-session", "-d", "-s", name, *size, f"read go; {command}"])
            try:
                subprocess.run(
                    ["tmux", "pipe-pane", "-t", name, f"cat >> {shlex.quote(str(output))}"], check=True
                )
                time.sleep(0.2)  # the shell is at its read
                started = time.perf_counter()
                subprocess.run(["tmux", "send-keys", "-t", name, "Enter"], check=True)
                timings.append(_wait_for(output, marker.encode(), started))
            finally:
                subprocess.run(["tmux", "kill-session", "-t", name], check=False)
    return timings


def start_session(arguments: list[str]) -> None:
    """Run ``tmux ARGUMENTS``, again if the server was on its way out (the last session just closed)."""
    for attempt in range(5):
        if subprocess.run(["tmux", *arguments], capture_output=True, check=False).returncode == 0:
            return
        time.sleep(0.2 * (attempt + 1))
    subprocess.run(["tmux", *arguments], check=True)


def _wait_for(output: Path, marker: bytes, started: float, timeout_s: float = 120) -> float:
    """Seconds since ``started`` when ``marker`` first shows in the terminal output written to ``output``."""
    seen = b""
    with output.open("rb") as pane:
        while True:
            chunk = pane.read()
            if chunk:
                seen = seen[-4096:] + chunk  # a sequence cut at a read's end is whole in the next
                if marker in ESCAPE_SEQUENCE.sub(b"", seen):
                    return time.perf_counter() - started
            elif time.perf_counter() - started > timeout_s:
                raise RuntimeError(f"{marker!r} not on screen within {timeout_s} s")
            else:
                time.sleep(0.002)


def in_repository(arguments: str) -> str:
    """A shell command that runs Python with ``arguments`` from the repository, at tmux's own size."""
    return f"cd {REPO_ROOT} && env -u COLUMNS -u LINES {sys.executable} {arguments}"


def first_frame_seconds(path: str, runs: int = 3) -> list[float]:
    """Seconds from starting ``raglens PATH`` in tmux until its first frame is on screen."""
    return seconds_until_on_screen(in_repository(f"-m raglens {path}"), "ask a question", runs)


def bare_first_frame_seconds(runs: int = 3) -> list[float]:
    """The same for a bare Textual app with one input: the floor raglens is measured against."""
    script = Path(tempfile.mkdtemp()) / "bare_app.py"
    script.write_text(BARE_APP, encoding="utf-8")
    return seconds_until_on_screen(in_repository(str(script)), "ask a question", runs)


def warm_hits_seconds(path: str, query: str, runs: int = 3) -> list[float]:
    """Seconds from starting ``raglens PATH QUERY`` until its hits cover every window, cache warm.

    A headless search first fills the cache and makes the ONNX export, as a first launch would.
    """
    subprocess.run(
        [sys.executable, "-m", "raglens", "search", path, query, "-q"],
        cwd=REPO_ROOT,
        check=True,
        capture_output=True,
    )
    return seconds_until_on_screen(
        in_repository(f"-m raglens {path} {shlex.quote(query)}"), "ranked over all", runs
    )


@dataclass
class Phases:
    """Event-loop lags (seconds) per phase of a session, and what the phases took."""

    lags: dict[str, list[float]] = field(default_factory=lambda: {name: [] for name in PHASES})
    window_count: int = 0
    indexing_s: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)


PHASES = ("start-up", "embedding", "querying")
"""Until the model is loaded (the corpus appears meanwhile); until every window is embedded;
typing queries into the full index."""


async def lag_and_latency(path: str) -> Phases:
    """Event-loop stalls while the app starts, while the real model embeds, and while queries are typed."""
    app = RaglensApp(AppConfig(path=path, engine=EngineSettings(device="cpu")))
    phases = Phases()
    phase = "start-up"

    async with app.run_test(size=(150, 45)):
        expected = time.perf_counter()
        interval = 0.005

        def tick() -> None:
            nonlocal expected
            now = time.perf_counter()
            phases.lags[phase].append(max(0.0, now - expected))
            expected = now + interval

        app.set_interval(interval, tick)
        started = time.perf_counter()
        # Plain sleeps: Pilot.pause forces a repaint each call, which would load the machine itself.
        while app.main.a.model is None:
            await asyncio.sleep(0.01)
        phase = "embedding"
        while not (app.main.index is not None and app.main.index.is_complete):
            await asyncio.sleep(0.05)
        phases.indexing_s = time.perf_counter() - started
        phases.window_count = app.main.index.window_count
        phase = "querying"
        for repeat in range(3):
            for query in QUERIES:
                text = f"{query} {repeat}"
                box = app.query_one("#query", Input)
                box.value = text
                sent = time.perf_counter()
                await box.action_submit()
                while app.main.shown_query != text:
                    await asyncio.sleep(0.002)
                phases.latencies_ms.append((time.perf_counter() - sent) * 1000)
    return phases


def ensure_bytecode() -> None:
    """Compile every installed module and raglens, as an installer does, when Python would not cache it.

    With PYTHONDONTWRITEBYTECODE set (as on the development machines), every start compiles each
    imported module from source again: measured here, that doubled a bare Textual app's first frame
    (0.55 s against 0.22 s) and raglens's warm hits, which users with an ordinary install never see.
    """
    if not (sys.flags.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE")):
        return
    places = [sysconfig.get_paths()["purelib"], str(REPO_ROOT / "raglens")]
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "-j", "0", *places], capture_output=True, check=False
    )
    print("PYTHONDONTWRITEBYTECODE is set here: compiled the bytecode an ordinary install has first")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path", nargs="?", default=".")
    args = parser.parse_args()
    ensure_bytecode()
    if shutil.which("tmux"):
        # Alternating, so a change in the shared machine's load hits both alike.
        bare, frames, hits = [], [], []
        for _ in range(3):
            bare += bare_first_frame_seconds(runs=1)
            frames += first_frame_seconds(args.path, runs=1)
            hits += warm_hits_seconds(args.path, QUERIES[0], runs=1)
        print(f"bare Textual app, first frame in tmux: {', '.join(f'{t * 1000:.0f} ms' for t in bare)}")
        print(f"raglens, first frame in tmux: {', '.join(f'{t * 1000:.0f} ms' for t in frames)}")
        after = (statistics.median(hits) - statistics.median(bare)) * 1000
        print(
            "raglens PATH QUERY, warm cache, hits over every window: "
            f"{', '.join(f'{t * 1000:.0f} ms' for t in hits)}; median {after:+.0f} ms after the bare "
            "app's first frame"
        )
    phases = asyncio.run(lag_and_latency(args.path))
    print(f"indexed {phases.window_count} windows in {phases.indexing_s:.1f} s (model import and load in it)")
    for name in PHASES:
        lags_ms = sorted(lag * 1000 for lag in phases.lags[name])
        if not lags_ms:
            continue
        print(
            f"event-loop lag, {name} ({len(lags_ms)} ticks of 5 ms): "
            f"median {statistics.median(lags_ms):.1f} ms, "
            f"p99 {lags_ms[int(len(lags_ms) * 0.99)]:.1f} ms, worst {lags_ms[-1]:.1f} ms"
        )
    latencies = phases.latencies_ms
    print(
        f"Enter to hits on screen: median {statistics.median(latencies):.1f} ms, "
        f"worst {max(latencies):.1f} ms over {len(latencies)} queries (typing adds the 200 ms debounce)"
    )


if __name__ == "__main__":
    main()
