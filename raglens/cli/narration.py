"""Print the pipeline's narrated steps on stderr, with a live bar while embedding on a terminal."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

from raglens.pipeline import PipelineStep, WindowsEmbedded


class Narrator:
    """Turns pipeline steps into ``-> ...`` lines; on a terminal, embedding progress is a live bar."""

    def __init__(self, console: Console, quiet: bool = False) -> None:
        self._console = console
        self._quiet = quiet
        self._progress: Progress | None = None
        self._task: TaskID | None = None

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

    def _show_embedding(self, step: WindowsEmbedded) -> None:
        if not self._console.is_terminal:
            if step.done == step.total:
                self.say(step.describe())
            return
        if self._progress is None:
            self._progress = Progress(
                TextColumn(f"-> embedding via {step.model}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=self._console,
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task("embedding", total=step.total)
        assert self._task is not None
        self._progress.update(self._task, completed=step.done)
        if step.done == step.total:
            self._stop_progress()
            self.say(step.describe())

    def _stop_progress(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def __enter__(self) -> Narrator:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop_progress()
