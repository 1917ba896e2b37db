"""Notice a terminal that is gone even when no SIGHUP says so.

A process in another session than the terminal's (``setsid raglens …``, some multiplexers and
IDE terminals) gets no SIGHUP when the terminal closes: its reads and writes just fail with EIO.
Textual then panics into a graceful exit that writes to the dead terminal and hangs (measured:
the app and its embedding process stayed forever). Polling the terminal for a hang-up finds it.
"""

from __future__ import annotations

import contextlib
import select
import threading
from collections.abc import Callable

POLL_INTERVAL_MS = 500


def terminal_is_gone(fd: int, timeout_ms: int = 0) -> bool:
    """Whether the terminal on ``fd`` has hung up (its other end closed), waiting up to ``timeout_ms``."""
    poller = select.poll()
    poller.register(fd, 0)  # no events asked for: hang-up, error and a closed fd are always reported
    try:
        events = poller.poll(timeout_ms)
    except OSError:
        return True
    return any(mask & (select.POLLHUP | select.POLLERR | select.POLLNVAL) for _, mask in events)


def watch_terminal(
    fd: int, on_gone: Callable[[], None], interval_ms: int = POLL_INTERVAL_MS
) -> threading.Thread:
    """Call ``on_gone`` from a daemon thread once the terminal on ``fd`` hangs up.

    ``on_gone`` runs outside the event loop on purpose: the loop may be stuck writing to the dead
    terminal, so it must end the process itself.
    """

    def watch() -> None:
        with contextlib.suppress(ValueError):  # fd closed under us at interpreter exit
            while not terminal_is_gone(fd, interval_ms):
                pass
            on_gone()

    thread = threading.Thread(target=watch, name="raglens-terminal-watch", daemon=True)
    thread.start()
    return thread
