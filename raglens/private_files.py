"""Write files only their owner can read, whole or not at all: for the cache's copies of a corpus.

The memo of files as last read holds the corpus's texts and a stored index its windows: a file the
user keeps private (0600) must not become readable by others through the cache folder, so both are
made 0600 in folders made 0700. Each is written to a temporary file, flushed to the disk, then renamed
over the old one: a power cut leaves the old file or the new one, never a renamed file still empty.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def make_private_folder(folder: Path) -> None:
    """Make ``folder`` (and any missing parent) readable by its owner only, if it is not there."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)


STALE_AFTER_S = 3600
"""A temporary file this old is a writer's that was killed mid-write (a write takes seconds)."""


def forget_stale_temporaries(folder: Path) -> None:
    """Delete the temporary files :func:`write_privately` left in ``folder`` when killed mid-write."""
    stale_before = time.time() - STALE_AFTER_S
    with contextlib.suppress(OSError):
        for temporary in folder.glob("*.tmp"):
            if temporary.stat().st_mtime < stale_before:
                temporary.unlink(missing_ok=True)


def write_privately(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write ``path`` (mode 0600) with ``write``: whole, then renamed over the old; OSError if it
    could not be, with nothing left behind."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):  # under a folder that could not be made, there is none
            temporary.unlink(missing_ok=True)
        raise
