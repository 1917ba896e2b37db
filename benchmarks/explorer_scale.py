"""The explorer on a corpus of ~100k windows: stalls, Enter to hits, memory, re-scans and a warm start.

Usage: uv run python benchmarks/explorer_scale.py SOURCE [--windows 100000] [--rescans 3] [--no-tmux]

The corpus is copies of the real repository SOURCE, each under a path of its own (as
benchmarks/files_scale.py makes it). Copies share their windows' texts, so the cache holds each text
once: the real model (all-MiniLM-L6-v2, fp32) embeds SOURCE's windows once while the explorer holds
every copy's windows, and every later start is warm. In this process, the app runs under Textual's
test driver at 160x45 with a fresh cache, and a 5 ms interval timer measures the event loop's stalls
in each phase:

- start-up: until the corpus pane shows every file and the model is ready;
- embedding: until every window has its vector (the copies' vectors arrive with their text's);
- querying: questions submitted into the full index, Enter to hits drawn (and the ranking's part);
- re-scan: ``r`` pressed ``--rescans`` times, each until the index is complete again.

The stalls' floor, measured after the session in the same process: a bare Textual app at the same
size whose one Static, the whole screen, gets a new page of text every 0.1 s (what any Textual app
pays here to draw a new screenful); each phase's p99 is given as a multiple of the floor's.

Memory is the app process's resident set above what it held before the app started (the imports
alone), against the bytes of the vectors plus the corpus text (issue 23's goal: at most 1.3x), beside
the same app's on a one-file corpus measured first (what it holds whatever the corpus; since
2026-12-07, so the readings after it include what that first app left loaded, such as the language
identifier, and are not comparable with figures taken before), and after each re-scan, once the
app has settled its heap (issue 29's goal: after the last within 5% of after the first). In tmux,
with the cache now warm: a bare Textual app's first frame (the floor) and ``raglens CORPUS QUERY``
until its hits are ranked over every window, alternating (goal: within 2 s of the floor).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Input, Static

from benchmarks.app_responsiveness import (
    bare_first_frame_seconds,
    ensure_bytecode,
    in_repository,
    seconds_until_on_screen,
)
from benchmarks.files_scale import build_corpus
from raglens.held_text import utf8_of
from raglens.run import EngineSettings
from raglens.ui.app import RaglensApp
from raglens.ui.app_config import AppConfig
from raglens.ui.widgets.corpus_tree import CorpusTree

QUESTIONS = (
    "how do I add a command line option with a default value?",
    "what happens when a required argument is missing?",
    "prompt the user for a password",
    "make_context",
    "how are environment variables read for options?",
)
PHASES = ("start-up", "embedding", "querying", "re-scan")
TICK_S = 0.005


@dataclass
class Session:
    """What one explorer session measured."""

    lags_ms: dict[str, list[float]] = field(default_factory=lambda: {name: [] for name in PHASES})
    worst_at: dict[str, str] = field(default_factory=dict)
    """When in its phase the worst stall happened, in words."""
    phase_s: dict[str, float] = field(default_factory=dict)
    enter_to_hits_ms: list[float] = field(default_factory=list)
    ranking_ms: list[float] = field(default_factory=list)
    memory_mib: dict[str, float] = field(default_factory=dict)
    window_count: int = 0
    vector_mib: float = 0.0
    text_mib: float = 0.0
    text_held_mib: float = 0.0
    """The corpus text as Python holds it: a file with one character past U+00FF takes 2 or 4 bytes each."""
    rescans_taking_stored_index: list[bool] = field(default_factory=list)
    """For each re-scan, whether its index was the one stored when the files were last read."""
    unsettled: list[str] = field(default_factory=list)
    """The memory readings taken before the app had settled its heap (after waiting 10 s)."""
    floor_lags_ms: list[float] = field(default_factory=list)
    """The stalls of a bare Textual app redrawing its screen, measured after the session (the floor)."""


class StallWatch:
    """A thread that records where the event loop's thread is while it has not ticked for a while.

    It needs the GIL to look, so it sees the Python code a stall runs (a C call that holds the GIL is
    seen when it returns into Python); good enough to say which code to look at.
    """

    def __init__(self, over_s: float = 0.08) -> None:
        self.beat = time.perf_counter()
        self.stacks: collections.Counter[str] = collections.Counter()
        self._over_s = over_s
        self._loop_thread = threading.get_ident()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> StallWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(0.01):
            if time.perf_counter() - self.beat > self._over_s:
                frame = sys._current_frames().get(self._loop_thread)
                if frame is not None:
                    lines = traceback.format_stack(frame)[-7:]
                    self.stacks["".join(line for line in lines if "/asyncio/" not in line)] += 1

    def report(self) -> None:
        """Print the stacks seen most often in stalls."""
        for stack, count in self.stacks.most_common(6):
            print(f"--- seen {count} times in a stall over {self._over_s * 1000:.0f} ms:\n{stack}")


class CallbackWatch:
    """Every event-loop callback over ``over_ms``, with the messages and handlers it ran and for how long.

    Where the stall stacks see only the Python a stall was in when the watcher got the GIL, this
    names what held the loop: ``MainScreen.RunEvent:VectorsEmbedded 45`` or ``cb:Screen._on_timer_update
    60`` (a repaint). It wraps asyncio's callbacks and Textual's message dispatch for its lifetime.
    Each callback's own CPU time is beside its wall time: where the two differ, the loop's thread
    waited (for the GIL, or for a core), and what it ran is not what to make faster.
    """

    def __init__(self, over_ms: float = 16.0) -> None:
        self.over_ms = over_ms
        self.started = time.perf_counter()
        self.long: list[tuple[float, float, float, str]] = []
        """(duration ms, its thread's CPU ms, seconds since start, what ran) of each long callback."""
        self._spans: collections.Counter[str] = collections.Counter()
        self._undo: list[tuple[object, str, object]] = []

    def __enter__(self) -> CallbackWatch:
        import asyncio.events

        import textual.message_pump
        import textual.timer

        watch, spans = self, self._spans
        handle_run = asyncio.events.Handle._run
        dispatch = textual.message_pump.MessagePump._dispatch_message
        invoke = textual.message_pump.invoke

        def timed_run(handle: asyncio.events.Handle) -> None:
            spans.clear()
            started, cpu_started = time.perf_counter(), time.thread_time()
            handle_run(handle)
            took = (time.perf_counter() - started) * 1000
            if took > watch.over_ms:
                cpu = (time.thread_time() - cpu_started) * 1000
                parts = ", ".join(f"{name} {ms:.0f}" for name, ms in spans.most_common(4))
                watch.long.append((took, cpu, started - watch.started, parts))

        async def timed_dispatch(pump: Any, message: Any) -> Any:
            name = f"{type(pump).__name__}.{type(message).__name__}"
            if hasattr(message, "event"):
                name += f":{type(message.event).__name__}"  # raglens's RunEvent carries a process event
            started = time.perf_counter()
            try:
                return await dispatch(pump, message)
            finally:
                spans[name] += (time.perf_counter() - started) * 1000

        async def timed_invoke(callback: Any, *params: Any) -> Any:
            target = getattr(callback, "func", callback)
            name = "cb:" + getattr(target, "__qualname__", type(target).__name__)
            started = time.perf_counter()
            try:
                return await invoke(callback, *params)
            finally:
                spans[name] += (time.perf_counter() - started) * 1000

        for owner, attribute, replacement in (
            (asyncio.events.Handle, "_run", timed_run),
            (textual.message_pump.MessagePump, "_dispatch_message", timed_dispatch),
            (textual.message_pump, "invoke", timed_invoke),
            (textual.timer, "invoke", timed_invoke),
        ):
            self._undo.append((owner, attribute, getattr(owner, attribute)))
            setattr(owner, attribute, replacement)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for owner, attribute, original in reversed(self._undo):
            setattr(owner, attribute, original)

    def report(self, count: int = 25) -> None:
        """Print the longest callbacks, with when they ran."""
        print(f"{len(self.long)} event-loop callbacks over {self.over_ms:.0f} ms; the longest (its own CPU):")
        unnamed = "(no message or handler ran: the loop's own work, or a wait for the GIL)"
        for took, cpu, at, parts in sorted(self.long, reverse=True)[:count]:
            print(f"{took:6.0f} ms ({cpu:4.0f}) at {at:6.1f} s: {parts or unnamed}")


class CollectionWatch:
    """Every garbage collection over ``over_ms`` on any thread: its generation, how long, what it freed,
    and for the first full ones, the most common types of object it had to scan.

    Listing the objects takes time of its own, so the stalls measured beside it read high.
    """

    def __init__(self, over_ms: float = 16.0, censuses: int = 60) -> None:
        self.over_ms = over_ms
        self.started = time.perf_counter()
        self.long: list[tuple[float, float, int, int, str]] = []
        """(duration ms, seconds since start, generation, objects freed, census) of each long one."""
        self._censuses_left = censuses
        self._began = 0.0
        self._census = ""

    def _callback(self, stage: str, info: dict[str, int]) -> None:
        import gc

        if stage == "start":
            self._census = ""
            if info["generation"] == 2 and self._censuses_left > 0:
                self._censuses_left -= 1
                kinds = collections.Counter(type(item).__qualname__ for item in gc.get_objects())
                total = sum(kinds.values())
                self._census = f"{total:,} objects: " + ", ".join(
                    f"{name} {count:,}" for name, count in kinds.most_common(8)
                )
            self._began = time.perf_counter()
            return
        took = (time.perf_counter() - self._began) * 1000
        if took > self.over_ms:
            at = self._began - self.started
            self.long.append((took, at, info["generation"], info["collected"], self._census))

    def __enter__(self) -> CollectionWatch:
        import gc

        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc_info: object) -> None:
        import gc

        gc.callbacks.remove(self._callback)

    def report(self) -> None:
        """Print every long collection in the order they ran."""
        print(f"{len(self.long)} garbage collections over {self.over_ms:.0f} ms:")
        for took, at, generation, freed, census in sorted(self.long, key=lambda entry: entry[1]):
            print(f"{took:6.0f} ms at {at:6.1f} s, generation {generation}, freed {freed:,}  {census}")


def resident_mib() -> float:
    """This process's resident set, MiB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


async def explore(corpus: Path, cache: Path, rescans: int, watch: StallWatch | None) -> Session:
    """One session of the explorer on ``corpus`` with the real model, phase by phase."""
    import gc

    import numpy as np  # noqa: F401  (the imports are the baseline, not the app's memory)

    import raglens.ui.ranking

    gc.collect()
    session = Session()
    unwrapped = raglens.ui.ranking.rank_for_display

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return unwrapped(*args, **kwargs)
        finally:
            if phase == "querying":
                session.ranking_ms.append((time.perf_counter() - started) * 1000)

    raglens.ui.ranking.rank_for_display = timed  # the ranking worker imports it when it runs
    session.memory_mib["imports"] = resident_mib()
    session.memory_mib["one-file corpus"] = await one_file_floor(cache, session)
    app = RaglensApp(AppConfig(path=str(corpus), engine=EngineSettings(device="cpu", cache_dir=str(cache))))
    phase = "start-up"
    phase_started = time.perf_counter()

    async with app.run_test(size=(160, 45)):
        main = app.main
        expected = time.perf_counter()

        def tick() -> None:
            nonlocal expected
            now = time.perf_counter()
            lag = max(0.0, now - expected) * 1000
            lags = session.lags_ms.get(phase)
            expected = now + TICK_S
            if watch is not None:
                watch.beat = now if lags is not None else now + 3600  # closing: not watched
            if lags is None:
                return
            if not lags or lag > max(lags):
                session.worst_at[phase] = f"{now - phase_started:.1f} s in"
            lags.append(lag)

        app.set_interval(TICK_S, tick)

        def enter(name: str) -> None:
            nonlocal phase, phase_started
            session.phase_s[phase] = time.perf_counter() - phase_started
            phase, phase_started = name, time.perf_counter()

        def tree_filled() -> bool:
            tree = app.screen.query_one(CorpusTree)
            return main.corpus is not None and len(tree.root.children) > 0

        # Plain sleeps: Pilot.pause forces a repaint each call, which would load the machine itself.
        while not (tree_filled() and main.a.model is not None):
            await asyncio.sleep(0.01)
        enter("embedding")
        while not (main.index is not None and main.index.is_complete):
            await asyncio.sleep(0.05)
        session.window_count = main.index.window_count
        session.vector_mib = main.index.window_count * main.index.dimension * 4 / 2**20
        session.text_mib = sum(len(utf8_of(source.held)) for source in main.corpus.files) / 2**20
        session.text_held_mib = sum(sys.getsizeof(source.held) for source in main.corpus.files) / 2**20
        enter("querying")
        await asyncio.sleep(1)  # the last batch's re-rank and repaint
        if not await settled(main):
            session.unsettled.append("complete")
        session.memory_mib["complete"] = resident_mib()
        box = app.screen.query_one("#query", Input)
        for repeat in range(4):
            for question in QUESTIONS:
                text = f"{question} ({repeat})"
                box.value = text
                sent = time.perf_counter()
                await box.action_submit()
                while main.shown_query != text:
                    await asyncio.sleep(0.002)
                session.enter_to_hits_ms.append((time.perf_counter() - sent) * 1000)
        enter("re-scan")
        for number in range(1, rescans + 1):
            old_corpus = main.corpus
            main.action_rescan()
            while main.corpus is old_corpus or not (main.index is not None and main.index.is_complete):
                await asyncio.sleep(0.05)
            del old_corpus  # measured without this benchmark's own hold on the replaced corpus
            await asyncio.sleep(1)
            if not await settled(main):
                session.unsettled.append(f"after re-scan {number}")
            session.memory_mib[f"after re-scan {number}"] = resident_mib()
            session.rescans_taking_stored_index.append(main.a.index_taken)
        enter("closing")  # the app's exit (ending its processes) is not a stall anyone waits through
    return session


async def settled(main: Any) -> bool:
    """Once the app has settled its heap and given freed pages back, and collected; False if it had not
    within 10 s (a reading then may hold freed memory not given back yet)."""
    import gc

    settled_by = time.perf_counter() + 10
    while main.settling and time.perf_counter() < settled_by:
        await asyncio.sleep(0.05)
    gc.collect()
    return not main.settling


async def one_file_floor(cache: Path, session: Session) -> float:
    """The explorer's memory above the imports on a corpus of one small file, complete and settled: what
    it holds whatever the corpus (Textual's screen, the model's process handle, the language check)."""
    from raglens.diagnostics.question_language import identifier_ready

    start = resident_mib()
    with tempfile.TemporaryDirectory(prefix="raglens-one-file-") as folder:
        (Path(folder) / "note.md").write_text("A one-file corpus: the explorer's floor of memory.\n" * 40)
        engine = EngineSettings(device="cpu", cache_dir=str(cache))
        app = RaglensApp(AppConfig(path=folder, engine=engine))
        async with app.run_test(size=(160, 45)):
            main = app.main
            ready_by = time.perf_counter() + 120
            # The language identifier too: unpacking its tables holds ~75 MiB for a moment.
            while not (main.index is not None and main.index.is_complete and identifier_ready()):
                if time.perf_counter() > ready_by:
                    raise RuntimeError("the one-file corpus was not complete within 120 s")
                await asyncio.sleep(0.05)
            await asyncio.sleep(1)
            if not await settled(main):
                session.unsettled.append("one-file corpus")
            return resident_mib() - start


class BareRedraw(App[None]):
    """The stalls' floor: a bare Textual app whose one Static, the whole screen, gets new text."""

    def compose(self) -> ComposeResult:
        yield Static(id="page", markup=False)


FLOOR_REDRAW_S = 0.1
"""How often the floor's screen gets new text: about as often as the querying phase asks (~0.11 s)."""


async def redraw_floor(seconds: float = 5.0) -> list[float]:
    """The event loop's stalls (ms) of a bare Textual app at the same size, its screen given a new page
    of text every FLOOR_REDRAW_S: what any Textual app pays here to draw a new screenful.

    Run after the session (its memory is never in the session's readings), once the session's garbage
    is collected (a collection of it inside the floor would raise the floor).
    """
    import gc

    gc.collect()
    chooser = random.Random(23)
    words = Path(__file__).read_text().split()  # a page of this file's words, shuffled
    app = BareRedraw()
    lags: list[float] = []
    async with app.run_test(size=(160, 45)):
        expected = time.perf_counter()

        def tick() -> None:
            nonlocal expected
            now = time.perf_counter()
            lags.append(max(0.0, now - expected) * 1000)
            expected = now + TICK_S

        app.set_interval(TICK_S, tick)
        page = app.query_one("#page", Static)
        ends = time.perf_counter() + seconds
        while time.perf_counter() < ends:
            page.update("\n".join(" ".join(chooser.choices(words, k=30))[:160] for _ in range(45)))
            await asyncio.sleep(FLOOR_REDRAW_S)
    return lags


def percentile(values: list[float], share: float) -> float:
    """The value ``share`` of the way up ``values`` sorted (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def report(session: Session) -> None:
    """Print one session's figures against the issue's goals."""
    sizes = (
        f"vectors {session.vector_mib:.0f} MiB, text {session.text_mib:.0f} MiB "
        f"({session.text_held_mib:.0f} MiB as Python holds it)"
    )
    print(f"{session.window_count:,} windows; {sizes}")
    floor = session.floor_lags_ms
    floor_p99 = percentile(floor, 0.99) if floor else None
    if floor:
        print(
            f"stall floor, a bare Textual app at 160x45 given a new screenful of text every "
            f"{FLOOR_REDRAW_S:.1f} s ({len(floor)} ticks): median {statistics.median(floor):.1f} ms, "
            f"p99 {floor_p99:.1f} ms, worst {max(floor):.0f} ms"
        )
    for name in PHASES:
        lags = session.lags_ms[name]
        if not lags:
            continue
        p99 = percentile(lags, 0.99)
        against = f" = {p99 / floor_p99:.1f}x the floor's" if floor_p99 else ""
        print(
            f"stall, {name} ({session.phase_s.get(name, 0):.1f} s, {len(lags)} ticks of "
            f"{TICK_S * 1000:.0f} ms): "
            f"median {statistics.median(lags):.1f} ms, p99 {p99:.1f} ms{against}, "
            f"worst {max(lags):.0f} ms ({session.worst_at[name]}); goal p99 <= 16, worst <= 100"
        )
    enter = session.enter_to_hits_ms
    print(
        f"Enter to hits drawn: p50 {statistics.median(enter):.0f} ms, worst {max(enter):.0f} ms; ranking p50 "
        f"{statistics.median(session.ranking_ms):.0f} ms (goals 100 and 30)"
    )
    base = session.memory_mib["imports"]
    held = session.memory_mib["complete"] - base
    floor = session.vector_mib + session.text_mib
    one_file = session.memory_mib["one-file corpus"]
    print(
        f"memory above the imports, index complete: {held:.0f} MiB = {held / floor:.2f}x vectors + text "
        f"(goal 1.3x); the same app on a one-file corpus: {one_file:.0f} MiB; the difference, what this "
        f"corpus costs: {held - one_file:.0f} MiB = {(held - one_file) / floor:.2f}x"
    )
    rescans = [(name, mib) for name, mib in session.memory_mib.items() if name.startswith("after")]
    if rescans:
        first = rescans[0][1] - base
        figures = ", ".join(f"{mib - base:.0f}" for _, mib in rescans)
        last = rescans[-1][1] - base
        print(f"memory after each re-scan: {figures} MiB; last/first {last / first:.3f} (goal <= 1.05)")
    if session.unsettled:
        print(f"read before the app had settled its heap: {', '.join(session.unsettled)}")
    taken = ", ".join("yes" if taken else "no" for taken in session.rescans_taking_stored_index)
    print(f"re-scans that took the index stored when the files were last read: {taken}")


def warm_start(corpus: Path, cache: Path, runs: int) -> None:
    """In tmux: the bare app's first frame and raglens's hits over every window, cache warm, alternating."""
    # The cache named on the command line: ``RAGLENS_CACHE_DIR=… cd … && python …`` (as this was until
    # 2026-12-07) gave the variable to ``cd`` alone, and the starts read the user's default cache.
    arguments = (
        f"{shlex.quote(str(corpus))} {shlex.quote(QUESTIONS[0])} --cache-dir {shlex.quote(str(cache))}"
    )
    command = in_repository(f"-m raglens {arguments}")
    bare, hits = [], []
    for _ in range(runs):
        bare += bare_first_frame_seconds(runs=1)
        hits += seconds_until_on_screen(command, "ranked over all", runs=1)
    gap = statistics.median(hits) - statistics.median(bare)
    # Asked after the timed starts (a search that found none would store one): was there one to take?
    search = [sys.executable, "-m", "raglens", "search", str(corpus), QUESTIONS[0], "--cache-dir", str(cache)]
    narrated = subprocess.run(search, capture_output=True, text=True, check=True).stderr
    print(f"a headless search after them took the stored index: {'from the index kept' in narrated}")
    print(
        f"warm start in tmux: bare app's first frame {', '.join(f'{t:.2f}' for t in bare)} s; raglens's hits "
        f"over every window {', '.join(f'{t:.2f}' for t in hits)} s; median {gap:+.2f} s after the floor "
        "(goal: within 2 s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("--windows", type=int, default=100_000)
    parser.add_argument("--rescans", type=int, default=3)
    parser.add_argument("--warm-runs", type=int, default=3)
    parser.add_argument("--no-tmux", action="store_true", help="skip the warm start in tmux")
    parser.add_argument("--stall-stacks", action="store_true", help="print where the longest stalls were")
    parser.add_argument(
        "--callbacks", action="store_true", help="print the longest event-loop callbacks and what they ran"
    )
    parser.add_argument(
        "--collections", action="store_true", help="print the long garbage collections and what they scanned"
    )
    parser.add_argument("--cache", type=Path, help="a vector cache folder to use (default: a fresh one)")
    args = parser.parse_args()
    ensure_bytecode()
    with tempfile.TemporaryDirectory(prefix="raglens-explorer-scale-") as folder:
        corpus, cache = Path(folder) / "corpus", args.cache or Path(folder) / "cache"
        expected = build_corpus(args.source.resolve(), corpus, args.windows)
        print(f"corpus: {expected:,} windows of 1000/200 characters from copies of {args.source}")
        watcher: StallWatch | CollectionWatch | CallbackWatch | None = (
            StallWatch()
            if args.stall_stacks
            else CollectionWatch()
            if args.collections
            else CallbackWatch()
            if args.callbacks
            else None
        )
        with watcher if watcher is not None else contextlib.nullcontext():
            stalls = watcher if isinstance(watcher, StallWatch) else None
            session = asyncio.run(explore(corpus, cache, args.rescans, stalls))
        # The floor runs after the session, outside its watcher: the watcher's report is the session's.
        session.floor_lags_ms = asyncio.run(redraw_floor())
        report(session)
        if watcher is not None:
            watcher.report()
        if not args.no_tmux and shutil.which("tmux"):
            warm_start(corpus, cache, args.warm_runs)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
