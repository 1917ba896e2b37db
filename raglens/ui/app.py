"""The raglens explorer: one main screen over the corpus, and a clean exit however the terminal ends."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterable

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from raglens.embedding_process import EmbeddingProcess
from raglens.ui.app_config import AppConfig
from raglens.ui.file_commands import FileCommands
from raglens.ui.navigation import NARROW_BELOW
from raglens.ui.screens.main import MainScreen
from raglens.ui.terminal_watch import watch_terminal

TERMINATED_EXIT_CODE = 143
"""What the explorer exits with after SIGTERM, as a shell reports a terminated process."""
HANGUP_EXIT_CODE = 129
"""What the explorer exits with when its terminal hangs up (SIGHUP), as a shell reports it."""
SHUTDOWN_GRACE_S = 2.0
"""How long a shutdown may take before a watchdog ends the process."""


def end_after(seconds: float, exit_code: int) -> None:
    """End the process with ``exit_code`` in ``seconds`` unless it has ended by then (a daemon timer)."""
    timer = threading.Timer(seconds, os._exit, (exit_code,))
    timer.daemon = True
    timer.start()


class RaglensApp(App[None]):
    """Runs rung-1 naive RAG on one folder and shows every step of it, in its main screen."""

    CSS_PATH = "raglens.tcss"
    TITLE = "raglens"
    COMMANDS = App.COMMANDS | {FileCommands}
    """The palette's own commands and raglens's (get_system_commands), and a search over the files."""
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_BELOW, "-wide")]
    """Below NARROW_BELOW columns the corpus pane folds away (t shows it), so the window view and
    the hits keep room for a line of code and the score strip."""
    BINDINGS = [
        Binding("q", "quit", "quit"),
        # Ctrl+C quits at once, as in any command, even from the question box (over its "copy").
        Binding("ctrl+c", "quit", "quit", show=False, priority=True),
    ]

    def __init__(self, config: AppConfig, process: EmbeddingProcess | None = None) -> None:
        """``process`` is an embedding process already started for ``config`` (the CLI starts it before
        importing Textual, so the model opens while the app loads); None starts one at mount."""
        super().__init__()
        self.config = config
        self.main = MainScreen(config, process)
        """The explorer's screen: its runs (A, and B while compared), panes and question."""
        self._signals: list[int] = []
        """The signals whose handlers this app installed, removed again when it closes."""

    def get_default_screen(self) -> Screen[None]:
        return self.main

    def on_mount(self) -> None:
        self._handle_termination()

    def _handle_termination(self) -> None:
        """On SIGTERM, exit as if the user quit, within SHUTDOWN_GRACE_S; on SIGHUP, at once.

        Without this, Python's default handling kills the app mid-frame and leaves the terminal in
        the alternate screen with mouse reporting on.
        """
        import asyncio
        import signal

        loop = asyncio.get_running_loop()
        output = sys.__stdout__.fileno() if sys.__stdout__ is not None else -1
        if not self.is_headless and output >= 0 and os.isatty(output):
            watch_terminal(output, self._hang_up)  # a terminal closed without SIGHUP: reads fail with EIO
        handlers = {signal.SIGTERM: self._terminate, signal.SIGHUP: self._hang_up}
        for number, handler in handlers.items():
            # Not possible off the main thread, or on a platform without these signals.
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(number, handler)
                self._signals.append(number)

    def _terminate(self) -> None:
        """Quit as ``q`` does (the terminal is restored); a watchdog ends the process if that hangs."""
        end_after(SHUTDOWN_GRACE_S, TERMINATED_EXIT_CODE)
        self.exit(None, TERMINATED_EXIT_CODE)

    def _hang_up(self) -> None:
        """The terminal is gone: stop the embedding processes and end now, writing nothing to it.

        Called on SIGHUP by the event loop, or by the terminal watcher's thread when the terminal
        closed without a SIGHUP; either way the process ends here.

        A graceful exit writes to the dead terminal, and Textual's writer thread then never drains
        its queue: 11 of 15 closed terminals left raglens running forever. The cache stays whole:
        the embedding process commits each batch in its own transaction.
        """
        self.main.close_runs(SHUTDOWN_GRACE_S / 2)
        os._exit(HANGUP_EXIT_CODE)

    def on_unmount(self) -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        for number in self._signals:
            loop.remove_signal_handler(number)
        self.main.close_runs(2)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        main = self.main
        yield SystemCommand("Window settings", "Change unit, size, overlap and k", main.action_settings)
        yield SystemCommand("One more hit", "Increase k by one", lambda: main.action_change_k(1))
        yield SystemCommand("One fewer hit", "Decrease k by one", lambda: main.action_change_k(-1))
        yield SystemCommand(
            "Re-scan the corpus", "Read the files again; embed only what changed", main.action_rescan
        )
        yield SystemCommand("Help", "Keys and what the colours mean", main.action_help)
