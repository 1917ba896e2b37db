"""How long the explorer's why view (y) takes on a warm model, against the bare model's encode of one window.

Usage: uv run python benchmarks/why_latency.py [PATH] [--question Q] [--rounds 15]

Opens the explorer (headless, Textual's run_test) on PATH with the real bundled model and a vector cache
that already holds PATH's vectors and the ONNX export (made first, in a temporary folder, if needed),
asks Q, waits for the ranking over every window, then presses y on each hit in turn and times the key
to the view holding the answer (the view opens at once; both token passes run in the embedding process,
then the answer crosses the socket and fills the view, which Textual paints on its next refresh). The first
press is reported apart: on a warm start every vector comes from the cache, so it opens the export's
windows session (~0.1 s). The floor, measured in the same run in this process: the bare export's
``encode`` of one of the same windows (what a plain run pays to embed one window).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from benchmarks.app_responsiveness import ensure_bytecode
from raglens.fingerprint import fingerprint_model
from raglens.onnx_model import OnnxEmbedder, export_model, export_path
from raglens.run import EngineSettings
from raglens.ui.app import RaglensApp
from raglens.ui.app_config import AppConfig
from raglens.ui.screens.main import MainScreen
from raglens.ui.screens.why import WhyPart, WhyScreen, part_renderable
from raglens.ui.widgets.hit_list import HitList

REPO_ROOT = Path(__file__).resolve().parent.parent


def warm_cache(path: str, cache_dir: Path) -> None:
    """Export the model and embed PATH's windows into ``cache_dir``, so the explorer starts warm."""
    fingerprint = fingerprint_model(None)
    assert fingerprint is not None
    target = export_path(cache_dir, fingerprint)
    if not target.exists():
        print(f"exporting the model to {target} (imports torch once)")
        export_model(fingerprint, target)
    command = [sys.executable, "-m", "raglens", "search", path, "warm up", "-q", "--json"]
    subprocess.run([*command, "--cache-dir", str(cache_dir)], check=True, capture_output=True)


def answered(app: RaglensApp) -> bool:
    screen = app.screen
    return isinstance(screen, WhyScreen) and all(part.attribution is not None for part in screen.parts)


last_part: list[WhyPart] = []
"""The last panel filled, rendered once more on its own to time the drawing."""


async def why_latencies(
    path: str, question: str, cache_dir: Path, rounds: int
) -> tuple[list[float], list[str]]:
    """Seconds from y to the filled view, per press, and the texts of the windows explained."""
    engine = EngineSettings(device="cpu", cache_dir=str(cache_dir))
    app = RaglensApp(AppConfig(path=path, query=question, engine=engine))
    seconds, texts = [], []
    pressed: list[float] = []
    handler = MainScreen.action_why

    def timed_why(screen: MainScreen) -> None:
        pressed.append(time.perf_counter())
        handler(screen)

    MainScreen.action_why = timed_why  # type: ignore[method-assign]
    async with app.run_test(size=(160, 45)) as pilot:
        main = app.main
        while not (
            main.last_result is not None
            and main.last_result.ranked_count == main.last_result.window_count
            and app.query_one(HitList).hits
        ):
            await asyncio.sleep(0.02)
        main.action_focus_hits()
        hits = app.query_one(HitList).hits
        for press in range(rounds):
            await pilot.press("home", *["down"] * (press % len(hits)))
            await pilot.pause()
            # Timed from the key's handler: Pilot's press returns only once the app is idle, and its
            # own key dispatch (not the app's) took ~200 ms more here.
            pressed.clear()
            app.simulate_key("y")
            while not answered(app):
                await asyncio.sleep(0.001)
            # Until the view's widgets hold the answer; Textual paints them on its next refresh. (Pilot's
            # pause waits for the whole process to go idle, relay threads included: ~200 ms here.)
            seconds.append(time.perf_counter() - pressed[0])
            screen = app.screen
            assert isinstance(screen, WhyScreen)
            texts.append(screen.parts[0].window_text)
            last_part[:] = [screen.parts[0]]
            await pilot.press("escape")
            while isinstance(app.screen, WhyScreen):
                await asyncio.sleep(0.005)
    return seconds, texts


def bare_encode_seconds(cache_dir: Path, texts: list[str]) -> list[float]:
    """The bare export's encode of each window alone: the floor."""
    fingerprint = fingerprint_model(None)
    assert fingerprint is not None
    embedder = OnnxEmbedder(export_path(cache_dir, fingerprint), fingerprint)
    embedder.encode(texts[:1])  # opens the session: not part of one window's cost
    times = []
    for text in texts:
        started = time.perf_counter()
        embedder.encode([text])
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default=str(REPO_ROOT / "sample_corpus"))
    parser.add_argument("--question", default="what happens after a job is acknowledged?")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--cache-dir", type=Path)
    args = parser.parse_args()
    ensure_bytecode()
    with contextlib.ExitStack() as stack:
        cache_dir = args.cache_dir or Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="raglens-why-"))
        )
        measure(args, cache_dir)


def measure(args: argparse.Namespace, cache_dir: Path) -> None:
    """Warm the cache in ``cache_dir``, press y, time the floor, and print the figures."""
    warm_cache(args.path, cache_dir)
    seconds, texts = asyncio.run(why_latencies(args.path, args.question, cache_dir, args.rounds))
    floor = bare_encode_seconds(cache_dir, texts)
    later = sorted(seconds[1:])
    print(f"{args.rounds} presses of y on {args.path}, question {args.question!r}")
    print(f"first press (opens the export's windows session): {seconds[0] * 1000:.0f} ms")
    started = time.perf_counter()
    Console(width=160, file=io.StringIO()).print(part_renderable(last_part[0], args.question))
    print(f"one render of a filled panel at 160 columns: {(time.perf_counter() - started) * 1000:.0f} ms")
    print(
        f"later presses: p50 {statistics.median(later) * 1000:.0f} ms, "
        f"worst {later[-1] * 1000:.0f} ms (goal: <= 150 ms)"
    )
    floor_ms = statistics.median(floor) * 1000
    print(f"floor, the bare export's encode of one of the same windows: p50 {floor_ms:.0f} ms")
    print(f"later presses are {statistics.median(later) * 1000 / floor_ms:.1f}x the floor")


if __name__ == "__main__":
    main()
