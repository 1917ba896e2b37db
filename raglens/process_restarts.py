"""When the embedding process dies under the app: how to say so, and how often to start it again."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field

RESTART_LIMIT = 3
RESTART_PERIOD_S = 60.0


def describe_exit(exit_code: int | None) -> str:
    """``killed by SIGKILL`` for a negative exit code, else ``exit code N``."""
    if exit_code is None:
        return "exit code unknown"
    if exit_code < 0:
        try:
            return f"killed by {signal.Signals(-exit_code).name}"
        except ValueError:
            return f"killed by signal {-exit_code}"
    return f"exit code {exit_code}"


@dataclass
class RestartBudget:
    """At most ``limit`` restarts within ``period_s``: a process that dies at once every time (a model
    that crashes on load, no memory left) is not started again forever."""

    limit: int = RESTART_LIMIT
    period_s: float = RESTART_PERIOD_S
    _recent: list[float] = field(default_factory=list)

    def allow(self, now: float) -> bool:
        """Whether a restart at ``now`` (monotonic seconds) is within the budget; counts it if so."""
        self._recent = [when for when in self._recent if now - when < self.period_s]
        if len(self._recent) >= self.limit:
            return False
        self._recent.append(now)
        return True
