"""The consoles the headless commands print with: no syntax highlighting, and no line broken in a file.

Rich wraps at 80 columns when the output is not a terminal, so ``raglens search … > hits.txt`` broke
citations and sentences mid-phrase; a pipe or a file gets whole lines (tables as wide as they need).
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from rich.console import Console

PIPED_WIDTH = 200
"""Columns for tables when the output is a file or a pipe (unless COLUMNS says otherwise)."""


def console_for(*, stderr: bool = False, file: TextIO | None = None) -> Console:
    """A console on stdout (or stderr, or ``file``) that wraps at the terminal's width, and never in a
    file or pipe."""
    stream = file if file is not None else sys.stderr if stderr else sys.stdout
    try:
        interactive = stream.isatty()
    except (AttributeError, ValueError):
        interactive = False
    if interactive:
        return Console(file=file, stderr=stderr, highlight=False)
    width = None if os.environ.get("COLUMNS") else PIPED_WIDTH
    return Console(file=file, stderr=stderr, highlight=False, soft_wrap=True, width=width)
