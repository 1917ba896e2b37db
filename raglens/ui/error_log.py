"""The explorer's error log: the traceback of every failed worker, for a bug report."""

from __future__ import annotations

import contextlib
import datetime
import traceback
from pathlib import Path


def write_error_log(path: Path, what: str, error: BaseException) -> None:
    """Append ``error``'s traceback under a dated heading; a log that cannot be written is let go."""
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    lines = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    with contextlib.suppress(OSError):  # the notification has already told the user
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as log:
            log.write(f"--- {stamp} {what} failed\n{lines}\n")
