"""An eval grid run from the explorer: ``raglens eval … --grid … --events`` as a child process, its
events (raglens.grid_events) read line by line.

A child, not a thread: the grid loads models (torch, for a configuration not yet exported), which
would hold the UI's GIL for seconds. The child dies with the explorer, SIGKILL included.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator, Sequence

from raglens.configuration import GridAxis, RetrievalConfig
from raglens.errors import BadInputError
from raglens.grid_events import GridEvent, GridFailed, GridFinished, decode
from raglens.parent_death import DIE_WITH_PARENT_ENV
from raglens.ui.app_config import AppConfig

COMPLAINTS_SHOWN = 3
"""The child's last stderr lines (narration aside) that explain an end it did not report."""


def grid_command(
    config: AppConfig, a: RetrievalConfig, golden: str, axes: Sequence[GridAxis], k: int
) -> list[str]:
    """The ``raglens eval`` command line for this corpus and engine: configuration ``a`` over ``axes``."""
    params, engine = a.params, config.engine
    command = [sys.executable, "-m", "raglens", "eval", config.path, golden, "-k", str(k), "--events"]
    command += ["--unit", params.unit.value, "--size", str(params.size)]
    command += ["--overlap", str(params.overlap), "--max-file-bytes", str(config.max_file_bytes)]
    for axis in axes:
        command += ["--grid", axis.spec()]
    if a.model:
        command += ["--model", a.model]
    if a.max_seq_length is not None:
        command += ["--max-seq-length", str(a.max_seq_length)]
    if a.precision:
        command += ["--precision", a.precision]
    if engine.device:
        command += ["--device", engine.device]
    if not engine.offline:
        command += ["--allow-download"]
    command += ["--cache-dir", engine.cache_dir] if engine.cache_dir else ["--no-cache"]
    if engine.embedder_factory:
        command += ["--embedder-factory", engine.embedder_factory]
    return command


class GridChild:
    """The running grid: the events it sends on stdout, its stderr drained alongside."""

    def __init__(self, command: Sequence[str], width: int) -> None:
        environment = {**os.environ, DIE_WITH_PARENT_ENV: str(os.getpid()), "COLUMNS": str(width)}
        environment["PYTHONPATH"] = os.pathsep.join(path for path in sys.path if path)
        self._process = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=environment,
        )
        self._complaints: deque[str] = deque(maxlen=COMPLAINTS_SHOWN)
        """The last lines of stderr that are not narration: they explain a crash."""
        # stderr is read alongside stdout: a child narrating more than the pipe holds would block.
        self._drain = threading.Thread(target=self._read_stderr, daemon=True, name="grid stderr")
        self._drain.start()

    def _read_stderr(self) -> None:
        assert self._process.stderr is not None
        for line in self._process.stderr:
            if line.strip() and not line.startswith("-> "):
                self._complaints.append(line.rstrip())

    def events(self) -> Iterator[GridEvent]:
        """Each event as the child sends it, until its GridFinished or GridFailed.

        A child that ends without either (killed, crashed) or sends a line that is not an event ends
        with a GridFailed made up here, from its exit code and its last complaints.
        """
        assert self._process.stdout is not None
        for line in self._process.stdout:
            if not line.endswith("\n"):
                break  # cut short by the child's end: the exit code says more than the fragment
            try:
                event = decode(line)
            except BadInputError as error:
                self.stop()
                self._drain.join()
                yield GridFailed(str(error))
                return
            yield event
            if isinstance(event, (GridFinished, GridFailed)):
                self._end()
                return
        yield GridFailed(self._why_ended(self._end()))

    def _end(self) -> int:
        """Wait for the child to exit and for its stderr to be read; its exit code."""
        code = self._process.wait()
        self._drain.join()
        return code

    def _why_ended(self, code: int) -> str:
        """A GridFailed's message for a child that exited with ``code`` and sent no last event."""
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            what = f"the grid's process was killed by {name}"
        else:
            what = f"the grid's process ended (exit code {code}) without its report"
        return "; ".join([what, *self._complaints])

    @property
    def pid(self) -> int:
        return self._process.pid

    def has_ended(self) -> bool:
        """Whether the child process is gone."""
        return self._process.poll() is not None

    def stop(self) -> None:
        """End the child now (the user cancelled, or the explorer is closing)."""
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
