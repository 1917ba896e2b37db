"""Measure how the explorer feels: first frame, event-loop stalls while indexing, keystroke to hits.

Usage: uv run python benchmarks/app_responsiveness.py [PATH]   (default: this repository)
Needs tmux for the first-frame figure. Numbers vary on shared machines; run it twice.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from textual.widgets import Input

from raglens.ui.app import AppConfig, RaglensApp

REPO_ROOT = Path(__file__).resolve().parent.parent
QUERIES = ("what happens after a job is acknowledged?", "how are windows cut?", "drain_pending_jobs")


def first_frame_seconds(path: str, runs: int = 3) -> list[float]:
    """Seconds from starting ``raglens PATH`` in tmux until its first frame is on screen."""
    timings = []
    for _ in range(runs):
        name = f"raglens-bench-{uuid.uuid4().hex[:6]}"
        command = f"cd {REPO_ROOT} && env -u COLUMNS -u LINES {sys.executable} -m raglens {path}"
        started = time.perf_counter()
        size = ["-x", "150", "-y", "45"]
        subprocess.run(["tmux", "new-session", "-d", "-s", name, *size, command], check=True)
        try:
            while True:
                capture = ["tmux", "capture-pane", "-p", "-t", name]
                screen = subprocess.run(capture, capture_output=True, text=True, check=False)
                if "ask a question" in screen.stdout:
                    timings.append(time.perf_counter() - started)
                    break
                if time.perf_counter() - started > 60:
                    raise RuntimeError("no first frame within 60 s")
                time.sleep(0.005)
        finally:
            subprocess.run(["tmux", "kill-session", "-t", name], check=False)
    return timings


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
    app = RaglensApp(AppConfig(path=path, device="cpu"))
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
        while app.model is None:
            await asyncio.sleep(0.01)
        phase = "embedding"
        while not (app.index is not None and app.index.is_complete):
            await asyncio.sleep(0.05)
        phases.indexing_s = time.perf_counter() - started
        phases.window_count = app.index.window_count
        phase = "querying"
        for repeat in range(3):
            for query in QUERIES:
                text = f"{query} {repeat}"
                box = app.query_one("#query", Input)
                box.value = text
                sent = time.perf_counter()
                await box.action_submit()
                while app.shown_query != text:
                    await asyncio.sleep(0.002)
                phases.latencies_ms.append((time.perf_counter() - sent) * 1000)
    return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path", nargs="?", default=".")
    args = parser.parse_args()
    if shutil.which("tmux"):
        frames = first_frame_seconds(args.path)
        print(f"first frame in tmux: {', '.join(f'{t * 1000:.0f} ms' for t in frames)}")
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
