"""The terminal watcher: a closed terminal is noticed without any signal."""

from __future__ import annotations

import os
import pty
import threading

from raglens.ui.terminal_watch import terminal_is_gone, watch_terminal


def test_a_terminal_whose_other_end_closes_is_noticed_without_a_sighup() -> None:
    controller, terminal = pty.openpty()
    gone = threading.Event()
    try:
        assert not terminal_is_gone(terminal)
        watcher = watch_terminal(terminal, gone.set, interval_ms=20)
        assert not gone.wait(0.2), "an open terminal is not gone"
        os.close(controller)  # what closing the terminal window does to the app's end of it
        assert gone.wait(5), "the watcher did not notice the closed terminal"
        watcher.join(5)
        assert terminal_is_gone(terminal)
    finally:
        os.close(terminal)
