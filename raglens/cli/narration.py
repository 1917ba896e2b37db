"""Print the pipeline's narrated steps on stderr, with a live bar while embedding on a terminal."""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    Task,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from raglens.display import duration
from raglens.pipeline_steps import PipelineStep, WindowsEmbedded

COUNTED_SHOWN_EVERY = 2.0
"""Seconds between two updates of a counted step's bar (cases scored, windows measured), and before the
first: a short step shows none."""
COUNTED_BEFORE_ESTIMATE = 20
"""Items counted before the time left is extrapolated from their pace (the first query warms the model)."""


class TimeLeftColumn(TimeRemainingColumn):
    """Rich's time remaining for an embedding bar; the grid's own estimate for the grid's bar.

    Rich extrapolates from tasks done, which is wrong for a grid: a cached configuration takes a
    second, the next one minutes. The grid's estimate counts windows to embed (or says nothing).
    """

    def render(self, task: Task) -> Text:
        if "seconds_left" not in task.fields:
            return super().render(task)
        left = task.fields["seconds_left"]
        return Text("" if left is None else f"~{duration(left)} left", style="progress.remaining")


@dataclass
class _Count:
    """A counted step: when it started, when its bar was last updated (monotonic), and its bar."""

    started: float
    shown: float
    task: TaskID | None = None


class Narrator:
    """Turns pipeline steps into ``-> ...`` lines; on a terminal, progress is a live bar.

    Embedding shows a bar per window set; an eval grid adds a bar over its configurations with the
    time left, in the same live display, above the embedding bar of the configuration running.
    """

    def __init__(self, console: Console, quiet: bool = False) -> None:
        self._console = console
        self._quiet = quiet
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        """The embedding bar, while a window set embeds."""
        self._grid_task: TaskID | None = None
        """The bar over an eval grid's configurations, while one runs."""
        self._counts: dict[str, _Count] = {}
        """The counted steps under way (golden cases scored, windows measured), by label."""

    def say(self, message: str) -> None:
        """One narrated line of the CLI's own, such as loading the model."""
        if not self._quiet:
            self._console.print(f"-> {message}", markup=False, highlight=False)

    def __call__(self, step: PipelineStep) -> None:
        if self._quiet:
            return
        if isinstance(step, WindowsEmbedded):
            self._show_embedding(step)
            return
        self.say(step.describe())

    def _live(self) -> Progress:
        if self._progress is None:
            self._progress = Progress(
                TextColumn("-> {task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeLeftColumn(),
                console=self._console,
                transient=True,
            )
            self._progress.start()
        return self._progress

    def grid_step(self, done: int, total: int, label: str, seconds_left: int | None = None) -> None:
        """The eval grid starts configuration ``done + 1`` of ``total`` (``done == total``: finished),
        with the grid's own estimate of the time left (None: not known yet)."""
        if self._quiet:
            return
        if not self._console.is_terminal:
            return  # the narrated lines say it
        progress = self._live()
        if self._grid_task is None:
            self._grid_task = progress.add_task("grid", total=total, seconds_left=None)
        progress.update(
            self._grid_task, completed=done, description=f"grid: {label}", seconds_left=seconds_left
        )
        if done >= total:
            progress.remove_task(self._grid_task)
            self._grid_task = None
            self._stop_if_idle()

    def cases_scored(self, done: int, total: int) -> None:
        """``done`` of ``total`` golden cases scored (0: scoring starts; ``total``: it ended)."""
        self.counted("scoring the cases", done, total)

    def counted(self, label: str, done: int, total: int) -> None:
        """``done`` of ``total`` items of the step ``label`` (0: the step starts; ``total``: it ended).

        On a terminal, a live bar of the count, updated at most every COUNTED_SHOWN_EVERY seconds, with
        the time left at the pace so far once COUNTED_BEFORE_ESTIMATE items set it; off a terminal
        nothing, as for embedding. Cheap between updates: it only reads the clock.
        """
        if self._quiet:
            return
        now = time.monotonic()
        if done == 0 and total > 0:
            self._counts[label] = _Count(now, now)
            return
        count = self._counts.setdefault(label, _Count(now, now))
        if done < total and now - count.shown < COUNTED_SHOWN_EVERY:
            return
        count.shown = now
        if done >= total:
            self._counts.pop(label, None)
            if count.task is not None and self._progress is not None:
                self._progress.remove_task(count.task)
                self._stop_if_idle()
            return
        if not self._console.is_terminal:
            return
        seconds_left = None
        if done >= COUNTED_BEFORE_ESTIMATE:
            seconds_left = round((total - done) * (now - count.started) / done)
        progress = self._live()
        if count.task is None:
            count.task = progress.add_task(label, total=total, completed=done, seconds_left=seconds_left)
        progress.update(count.task, completed=done, seconds_left=seconds_left)

    def _show_embedding(self, step: WindowsEmbedded) -> None:
        if not self._console.is_terminal:
            if step.done == step.total:
                self.say(step.describe())
            return
        progress = self._live()
        if self._task is None:
            self._task = progress.add_task(f"embedding via {step.model}", total=step.total)
        progress.update(self._task, completed=step.done)
        if step.done == step.total:
            progress.remove_task(self._task)
            self._task = None
            self._stop_if_idle()
            self.say(step.describe())

    def _stop_if_idle(self) -> None:
        idle = (
            self._task is None
            and self._grid_task is None
            and all(c.task is None for c in self._counts.values())
        )
        if self._progress is not None and idle:
            self._stop_progress()

    def _stop_progress(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
            self._task = self._grid_task = None
            for count in self._counts.values():
                count.task = None  # its bar went with the display; its start time stays

    def __enter__(self) -> Narrator:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop_progress()
