"""Stopping a pool of embedding processes never waits forever, and tells each worker's main thread."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from raglens import embedding_pool
from raglens.embedding_pool import _tell_main_thread, stop_pool


class FakeProcess:
    """A pool worker that exits when told, or, ``stuck``, only when killed."""

    def __init__(self, pid: int, stuck: bool) -> None:
        self.pid, self.stuck, self.alive = pid, stuck, True
        self.events: list[str] = []

    def join(self, timeout: float | None = None) -> None:
        self.events.append(f"join {timeout}")
        if not self.stuck:
            self.alive = False

    def is_alive(self) -> bool:
        return self.alive

    def kill(self) -> None:
        self.events.append("kill")
        self.alive = False

    def close(self) -> None:
        self.events.append("close")


class FakeQueue:
    def __init__(self) -> None:
        self.events: list[str] = []

    def cancel_join_thread(self) -> None:
        self.events.append("cancel_join_thread")

    def close(self) -> None:
        self.events.append("close")


def test_a_worker_that_does_not_exit_when_told_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedding_pool, "STOP_WAIT_S", 0.01)
    exits, stuck = FakeProcess(101, stuck=False), FakeProcess(102, stuck=True)
    told: list[int] = []
    pool: Any = {"processes": [exits, stuck], "input": FakeQueue(), "output": FakeQueue()}
    stop_pool(pool, told.append)
    assert told == [101, 102]
    assert exits.events == ["join 0.01", "close"]
    assert stuck.events == ["join 0.01", "kill", "join None", "close"]
    assert pool["input"].events == ["cancel_join_thread", "close"] and pool["output"].events == ["close"]


def no_c_library(*args: object, **kwargs: object) -> None:
    raise OSError("no C library to load")


@pytest.mark.skipif(sys.platform != "linux", reason="tgkill is Linux's")
@pytest.mark.parametrize("c_library", ["tgkill", "none: the process is signalled"])
def test_the_main_thread_is_told_even_while_it_sleeps_in_a_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, c_library: str
) -> None:
    """A Python SIGTERM handler runs once the main thread wakes: told by tgkill, its read is cut short;
    without it, the process is signalled as the library did."""
    if c_library != "tgkill":
        import ctypes

        monkeypatch.setattr(ctypes, "CDLL", no_c_library)
    script = tmp_path / "sleeper.py"
    script.write_text(
        textwrap.dedent(
            """
            import os, signal, sys, threading
            signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(7))
            threading.Thread(target=threading.Event().wait, daemon=True).start()  # another thread
            read_end, _ = os.pipe()
            print("ready", flush=True)
            os.read(read_end, 1)  # nothing ever comes
            """
        )
    )
    sleeper = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert sleeper.stdout is not None and sleeper.stdout.readline() == "ready\n"
        _tell_main_thread(sleeper.pid)
        assert sleeper.wait(timeout=30) == 7
    finally:
        if sleeper.poll() is None:
            os.kill(sleeper.pid, signal.SIGKILL)
            sleeper.wait()
