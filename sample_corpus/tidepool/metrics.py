"""Prometheus-style counters and histograms, kept in memory and served on demand."""

from __future__ import annotations

import threading
from collections import defaultdict

_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, 300)
_lock = threading.Lock()
_outcomes: dict[tuple[str, str], int] = defaultdict(int)
_durations: dict[str, list[int]] = defaultdict(lambda: [0] * (len(_BUCKETS) + 1))


def count_outcome(queue: str, outcome: str) -> None:
    with _lock:
        _outcomes[(queue, outcome)] += 1


def observe_duration(queue: str, seconds: float) -> None:
    with _lock:
        buckets = _durations[queue]
        for i, bound in enumerate(_BUCKETS):
            if seconds <= bound:
                buckets[i] += 1
                return
        buckets[-1] += 1


def render() -> str:
    """The metrics in the Prometheus text format."""
    lines = ["# TYPE tidepool_jobs_total counter"]
    with _lock:
        for (queue, outcome), value in sorted(_outcomes.items()):
            lines.append(f'tidepool_jobs_total{{queue="{queue}",outcome="{outcome}"}} {value}')
        lines.append("# TYPE tidepool_job_duration_seconds histogram")
        for queue, buckets in sorted(_durations.items()):
            running = 0
            for bound, count in zip((*_BUCKETS, "+Inf"), buckets):
                running += count
                lines.append(f'tidepool_job_duration_seconds_bucket{{queue="{queue}",le="{bound}"}} {running}')
    return "\n".join(lines) + "\n"
