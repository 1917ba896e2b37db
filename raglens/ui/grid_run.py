"""An eval grid run from the explorer: ``raglens eval … --grid`` as a child process, read line by line.

A child, not a thread: the grid loads models (torch, for a configuration not yet exported), which
would hold the UI's GIL for seconds. The child dies with the explorer, SIGKILL included.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from raglens.configuration import GridAxis
from raglens.parent_death import DIE_WITH_PARENT_ENV
from raglens.ui.app_config import AppConfig

_PROGRESS = re.compile(r"^-> grid (\d+)/(\d+): (.*?)(?:; about (\d+) s left at the pace so far)?$")


@dataclass(frozen=True)
class GridProgress:
    """The grid started configuration ``number`` of ``total``."""

    number: int
    total: int
    config: str
    seconds_left: int | None


def parse_progress(line: str) -> GridProgress | None:
    """A ``-> grid 2/4: … about 10 s left`` narration line, or None for any other line."""
    match = _PROGRESS.match(line.strip())
    if match is None:
        return None
    number, total, config, left = match.groups()
    return GridProgress(int(number), int(total), config, int(left) if left else None)


def grid_command(config: AppConfig, golden: str, axes: Sequence[GridAxis], k: int) -> list[str]:
    """The ``raglens eval`` command line for this corpus, model and cache, over ``axes``."""
    command = [sys.executable, "-m", "raglens", "eval", config.path, golden, "-k", str(k)]
    command += ["--unit", config.params.unit.value, "--size", str(config.params.size)]
    command += ["--overlap", str(config.params.overlap), "--max-file-bytes", str(config.max_file_bytes)]
    for axis in axes:
        command += ["--grid", f"{axis.key}={','.join(axis.values)}"]
    if config.model:
        command += ["--model", config.model]
    if config.max_seq_length is not None:
        command += ["--max-seq-length", str(config.max_seq_length)]
    if config.precision:
        command += ["--precision", config.precision]
    if config.device:
        command += ["--device", config.device]
    if not config.offline:
        command += ["--allow-download"]
    command += ["--cache-dir", config.cache_dir] if config.cache_dir else ["--no-cache"]
    if config.embedder_factory:
        command += ["--embedder-factory", config.embedder_factory]
    return command


class GridChild:
    """The running grid: its narration line by line, then its report (the table and the chart)."""

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
        self.errors: list[str] = []
        """Narration lines that are not progress: the last ones explain a failure."""
        self._out: list[str] = []
        # stdout is read alongside stderr: a report larger than the pipe would otherwise block the child.
        self._reader = threading.Thread(target=self._read_out, daemon=True)
        self._reader.start()

    def _read_out(self) -> None:
        assert self._process.stdout is not None
        self._out.append(self._process.stdout.read())

    def progress(self) -> Iterator[GridProgress]:
        """Each configuration as the child starts it, until its narration ends."""
        assert self._process.stderr is not None
        for line in self._process.stderr:
            step = parse_progress(line)
            if step is not None:
                yield step
            elif line.strip() and not line.startswith("-> "):
                self.errors.append(line.rstrip())

    def report(self) -> tuple[int, str]:
        """The exit code and what the child printed: the table and the chart, or nothing on failure."""
        code = self._process.wait()
        self._reader.join()
        return code, "".join(self._out)

    def stop(self) -> None:
        """End the child now (the user cancelled, or the explorer is closing)."""
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
