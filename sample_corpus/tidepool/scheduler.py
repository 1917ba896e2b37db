"""Recurring jobs: every(...) and cron(...) schedules, enqueued by one scheduler process."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable
from zoneinfo import ZoneInfo

from tidepool.queue import _REGISTRY, Queue

_SCHEDULES: list["Schedule"] = []


@dataclass
class Schedule:
    name: str
    next_slot: Callable[[datetime], datetime]
    catch_up: bool = True
    function: Callable[..., Any] | None = None
    arguments: dict[str, Any] = field(default_factory=dict)

    def enqueue(self, function: Callable[..., Any], **arguments: Any) -> "Schedule":
        self.function = function
        self.arguments = arguments
        self.name = f"{self.name}:{function.__module__}.{function.__qualname__}"
        _SCHEDULES.append(self)
        return self


def every(*, seconds: int = 0, minutes: int = 0, hours: int = 0, catch_up: bool = True) -> Schedule:
    period = timedelta(seconds=seconds, minutes=minutes, hours=hours)
    if period <= timedelta(0):
        raise ValueError("a schedule needs a positive period")
    epoch = datetime(2000, 1, 1, tzinfo=timezone.utc)

    def next_slot(after: datetime) -> datetime:
        periods = (after - epoch) // period + 1
        return epoch + periods * period

    return Schedule(f"every {period}", next_slot, catch_up)


def cron(expression: str, tz: str = "UTC", catch_up: bool = True) -> Schedule:
    minute, hour, day, month, weekday = _parse_cron(expression)
    zone = ZoneInfo(tz)

    def next_slot(after: datetime) -> datetime:
        candidate = after.astimezone(zone).replace(second=0, microsecond=0) + timedelta(minutes=1)
        for _ in range(366 * 24 * 60):
            if (candidate.minute in minute and candidate.hour in hour and candidate.day in day
                    and candidate.month in month and candidate.isoweekday() % 7 in weekday):
                return candidate.astimezone(timezone.utc)
            candidate += timedelta(minutes=1)
        raise ValueError(f"cron expression {expression!r} never matches")

    return Schedule(f"cron {expression} {tz}", next_slot, catch_up)


def _parse_field(text: str, low: int, high: int) -> set[int]:
    values: set[int] = set()
    for part in text.split(","):
        step = 1
        if "/" in part:
            part, step_text = part.split("/")
            step = int(step_text)
        if part == "*":
            start, end = low, high
        elif "-" in part:
            start, end = (int(x) for x in part.split("-"))
        else:
            start = end = int(part)
        values.update(range(start, end + 1, step))
    return values


def _parse_cron(expression: str) -> tuple[set[int], ...]:
    parts = expression.split()
    if len(parts) != 5:
        raise ValueError(f"a cron expression has five fields, got {expression!r}")
    limits = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 6)]
    return tuple(_parse_field(p, lo, hi) for p, (lo, hi) in zip(parts, limits))


def run_scheduler(claim_slot: Callable[[str, datetime], bool]) -> None:
    """Wake every second and enqueue each due slot exactly once (claim_slot dedupes)."""
    last_seen = {s.name: datetime.now(timezone.utc) for s in _SCHEDULES}
    while True:
        now = datetime.now(timezone.utc)
        for schedule in _SCHEDULES:
            slot = schedule.next_slot(last_seen[schedule.name])
            if slot <= now:
                if claim_slot(schedule.name, slot) and schedule.function is not None:
                    spec = _REGISTRY[f"{schedule.function.__module__}.{schedule.function.__qualname__}"]
                    Queue(spec.queue).enqueue(schedule.function, **schedule.arguments)
                last_seen[schedule.name] = slot
        time.sleep(1)
