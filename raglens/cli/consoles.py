"""The consoles and the stdout the headless commands print with: no syntax highlighting, no line broken
in a file, and output that cannot be written ends the command with its own exit code.

Rich wraps at 80 columns when the output is not a terminal, so ``raglens search … > hits.txt`` broke
citations and sentences mid-phrase; a pipe or a file gets whole lines (tables as wide as they need).
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from rich.console import Console

from raglens.errors import OutputUnwritableError

PIPED_WIDTH = 200
"""Columns for tables when the output is a file or a pipe (unless COLUMNS says otherwise)."""


class HeadlessConsole(Console):
    """A Rich console whose closed pipe raises BrokenPipeError, for main() to exit 141.

    Rich's own handler points stdout at /dev/null and exits 1, which hid ``| head`` from a pipeline.
    """

    def on_broken_pipe(self) -> None:
        self.quiet = True  # what is still buffered is never written again
        raise BrokenPipeError


def console_for(*, stderr: bool = False, file: TextIO | None = None) -> Console:
    """A console on stdout (or stderr, or ``file``) that wraps at the terminal's width, and never in a
    file or pipe."""
    stream = file if file is not None else sys.stderr if stderr else sys.stdout
    try:
        interactive = stream.isatty()
    except (AttributeError, ValueError):
        interactive = False
    if interactive:
        return HeadlessConsole(file=file, stderr=stderr, highlight=False)
    width = None if os.environ.get("COLUMNS") else PIPED_WIDTH
    return HeadlessConsole(file=file, stderr=stderr, highlight=False, soft_wrap=True, width=width)


class GuardedStdout:
    """Stands in for ``sys.stdout`` during a headless command: a write or flush that fails for any
    reason but a closed pipe (a full disk, an I/O error) raises OutputUnwritableError instead of an
    OSError that would end in a traceback.

    The failed stream is pointed at /dev/null first, so the interpreter's own last flush of what is
    still buffered cannot fail again at exit.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as error:
            raise self._unwritable(error) from None

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise self._unwritable(error) from None

    def __getattr__(self, name: str) -> Any:
        """Everything else (``isatty``, ``fileno``, ``encoding``…) is the stream's own."""
        return getattr(self.stream, name)

    def _unwritable(self, error: OSError) -> OutputUnwritableError:
        discard_output(self.stream)
        return OutputUnwritableError(f"cannot write the output on stdout: {error.strerror or error}")


def discard_output(stream: TextIO) -> None:
    """Point ``stream``'s file descriptor at /dev/null, when it has one; what it still buffers is lost."""
    try:
        descriptor = stream.fileno()
    except (OSError, ValueError, AttributeError):
        return  # an in-memory stream (a test's capture): nothing to flush at exit
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, descriptor)
    finally:
        os.close(devnull)
