"""Seconds from process start until a query has hits: cold, then warm (every vector cached).

Usage: uv run python benchmarks/warm_relaunch.py PATH
Uses a fresh cache in a temporary folder. The cold search embeds the whole corpus with the real
model (minutes for a 5 MB repository) and exports the model to ONNX; the warm runs embed nothing.
The app is timed in tmux until its hit summary shows a ranking over every window.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
QUERY = "window bands"
"""Short, so the hit summary with "ranked over" fits on one line of the pane."""


def search_seconds(path: str, cache_dir: str) -> float:
    command = [sys.executable, "-m", "raglens", "search", path, QUERY, "-q", "--json"]
    command += ["--cache-dir", cache_dir]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, cwd=REPO_ROOT)
    return time.perf_counter() - started


def app_seconds(
    path: str,
    cache_dir: str,
    until: str,
    limit_s: float = 900,
    poll_s: float = 0.02,
    at_end: Callable[[str], None] | None = None,
) -> float:
    """Seconds until ``until`` is on the app's screen, started in tmux with the query typed in.

    Each look is a ``tmux capture-pane`` process: over a run of a minute, pass a longer ``poll_s`` so
    the harness does not take CPU from the app it times. ``at_end`` is given the tmux session's name
    once ``until`` is seen, before the session is closed.
    """
    name = f"raglens-warm-{uuid.uuid4().hex[:6]}"
    command = (
        f"cd {REPO_ROOT} && env -u COLUMNS -u LINES {sys.executable} -m raglens {path} "
        f"'{QUERY}' --cache-dir {cache_dir}"
    )
    started = time.perf_counter()
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "160", "-y", "45", command], check=True)
    try:
        while True:
            capture = ["tmux", "capture-pane", "-p", "-t", name]
            screen = subprocess.run(capture, capture_output=True, text=True, check=False)
            if until in screen.stdout:
                seconds = time.perf_counter() - started
                if at_end is not None:
                    at_end(name)
                return seconds
            if time.perf_counter() - started > limit_s:
                raise RuntimeError(f"{until!r} did not appear within {limit_s} s")
            time.sleep(poll_s)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False)


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("path")
    args = parser.parse_args()
    path = str(Path(args.path).resolve())
    with tempfile.TemporaryDirectory() as cold_dir, tempfile.TemporaryDirectory() as cache_dir:
        if shutil.which("tmux"):
            cold = app_seconds(path, cold_dir, "ranked over")
            print(f"app, cold: first hits (over the windows embedded so far) after {cold:.1f} s")
        print(f"search, cold (embeds everything, exports ONNX): {search_seconds(path, cache_dir):.1f} s")
        warm = [search_seconds(path, cache_dir) for _ in range(3)]
        print(f"search, warm (0 embedded, no torch): {', '.join(f'{s:.2f} s' for s in warm)}")
        if shutil.which("tmux"):
            runs = [app_seconds(path, cache_dir, "ranked over all") for _ in range(3)]
            print(f"app, warm: hits over every window after {', '.join(f'{s:.2f} s' for s in runs)}")


if __name__ == "__main__":
    main()
