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
from pathlib import Path

from textual.widgets import Input

from raglens.ui.app import AppConfig, RaglensApp
from raglens.ui.messages import RankingReady

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


async def lag_and_latency(path: str) -> tuple[list[float], int, float, list[float]]:
    """Event-loop stalls while the real model loads and embeds, and Enter-to-hits latencies after."""
    app = RaglensApp(AppConfig(path=path, device="cpu"))
    lags: list[float] = []
    ranked_at: dict[str, float] = {}

    def record(message: object) -> None:
        if isinstance(message, RankingReady):
            ranked_at[message.query] = time.perf_counter()

    async with app.run_test(size=(150, 45), message_hook=record) as pilot:
        expected = time.perf_counter()
        interval = 0.005

        def tick() -> None:
            nonlocal expected
            now = time.perf_counter()
            lags.append(max(0.0, now - expected))
            expected = now + interval

        app.set_interval(interval, tick)
        started = time.perf_counter()
        while not (app.index is not None and app.index.is_complete):
            await pilot.pause(0.05)
        indexing_s = time.perf_counter() - started
        window_count = app.index.window_count
        latencies = []
        for repeat in range(3):
            for query in QUERIES:
                text = f"{query} {repeat}"
                box = app.query_one("#query", Input)
                box.value = text
                sent = time.perf_counter()
                await box.action_submit()
                while ranked_at.get(text, 0) < sent:
                    await pilot.pause(0.001)
                latencies.append((ranked_at[text] - sent) * 1000)
    return lags, window_count, indexing_s, latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path", nargs="?", default=".")
    args = parser.parse_args()
    if shutil.which("tmux"):
        frames = first_frame_seconds(args.path)
        print(f"first frame in tmux: {', '.join(f'{t * 1000:.0f} ms' for t in frames)}")
    lags, windows, indexing_s, latencies = asyncio.run(lag_and_latency(args.path))
    lags_ms = sorted(lag * 1000 for lag in lags)
    print(f"indexed {windows} windows in {indexing_s:.1f} s (model import and load included)")
    print(
        f"event-loop lag over {len(lags_ms)} ticks of 5 ms: median {statistics.median(lags_ms):.1f} ms, "
        f"p99 {lags_ms[int(len(lags_ms) * 0.99)]:.1f} ms, worst {lags_ms[-1]:.1f} ms"
    )
    print(
        f"Enter to hits on screen-ready ranking: median {statistics.median(latencies):.1f} ms, "
        f"worst {max(latencies):.1f} ms over {len(latencies)} queries (typing adds the 200 ms debounce)"
    )


if __name__ == "__main__":
    main()
