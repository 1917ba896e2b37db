"""Child processes of the explorer end when it does, however it ends (SIGKILL included)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal

_PR_SET_PDEATHSIG = 1
DIE_WITH_PARENT_ENV = "RAGLENS_DIE_WITH_PARENT"
"""Set (to the parent's pid) by the explorer for a command it runs as a child, such as an eval grid."""


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies, SIGKILL included; elsewhere pipe EOF does it."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def die_with(parent: int) -> None:
    """Die with ``parent``, and at once if it is already gone (it died before the request above)."""
    die_with_parent()
    if os.getppid() != parent:  # adopted already: nothing would ever come from the parent
        os._exit(1)


def die_with_parent_if_asked() -> None:
    """For a command the explorer started: die with it, and at once if it is already gone."""
    parent = os.environ.get(DIE_WITH_PARENT_ENV)
    if parent:
        die_with(int(parent))
