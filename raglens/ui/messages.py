"""Facts the background workers report to the app; the app's handlers own every piece of state."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from textual.message import Message

from raglens.embedding_events import (
    CacheLookedUp,
    CacheTrouble,
    ModelFailed,
    ModelReady,
    ProcessEnded,
    ProcessEvent,
    VectorsEmbedded,
    WindowsDone,
)

if TYPE_CHECKING:  # the search result holds numpy arrays; numpy loads after the first frame
    import numpy as np
    from textual.app import App

    from raglens.corpus import Corpus
    from raglens.diagnostics.probes import ProbeResult
    from raglens.diagnostics.prompt import PromptPreview
    from raglens.diagnostics.query_report import QueryDiagnostics
    from raglens.errors import RaglensError
    from raglens.search import SearchResult
    from raglens.ui.grid_run import GridChild, GridProgress
    from raglens.ui.versus_run import VersusRanking
    from raglens.ui.widgets.hit_list import HitExcerpt
    from raglens.windows import Window, WindowParams


class CorpusLoaded(Message):
    """The corpus was read and cut into windows."""

    def __init__(self, corpus: Corpus, params: WindowParams, windows: list[Window], texts: list[str]) -> None:
        super().__init__()
        self.corpus = corpus
        self.params = params
        self.windows = windows
        self.texts = texts


class CorpusFailed(Message):
    """The corpus could not be read, or holds nothing to index."""

    def __init__(self, error: RaglensError) -> None:
        super().__init__()
        self.error = error


# The embedding process's events, each its own message with its own handler.


@dataclass
class EngineReady(Message):
    """The process has opened its engine: queries can be embedded."""

    ready: ModelReady


@dataclass
class EngineFailed(Message):
    """The model could not be loaded, or failed while embedding; the process has exited."""

    event: ModelFailed


@dataclass
class CacheLooked(Message):
    """The process looked the window set up in the vector cache."""

    event: CacheLookedUp


@dataclass
class VectorsArrived(Message):
    """Vectors of some windows arrived, from the cache or the model."""

    event: VectorsEmbedded


@dataclass
class WindowSetDone(Message):
    """Every window of a window set has its vector."""

    event: WindowsDone


@dataclass
class CacheTroubled(Message):
    """The process could not use the vector cache as intended, and carries on."""

    event: CacheTrouble


@dataclass
class EmbedderEnded(Message):
    """The embedding process is gone."""

    event: ProcessEnded


_MESSAGE_FOR: dict[type, Callable[[Any], Message]] = {
    ModelReady: EngineReady,
    ModelFailed: EngineFailed,
    CacheLookedUp: CacheLooked,
    VectorsEmbedded: VectorsArrived,
    WindowsDone: WindowSetDone,
    CacheTrouble: CacheTroubled,
    ProcessEnded: EmbedderEnded,
}


def message_for(event: ProcessEvent) -> Message:
    """The app's message for one event of the embedding process."""
    return _MESSAGE_FOR[type(event)](event)


@dataclass
class ControlsEmbedded(Message):
    """The off-topic control questions have their vectors: the noise band can be drawn."""

    vectors: dict[str, np.ndarray]


class RankingReady(Message):
    """A query was ranked against the windows embedded so far."""

    def __init__(
        self,
        query: str,
        result: SearchResult,
        excerpts: Sequence[HitExcerpt],
        diagnostics: QueryDiagnostics,
    ) -> None:
        super().__init__()
        self.query = query
        self.result = result
        self.excerpts = excerpts
        """Each hit's first lines, coloured in the worker so the UI thread only draws them."""
        self.diagnostics = diagnostics
        """Score distribution, noise floor, literal matches and straddles of this ranking."""


@dataclass
class ProbesReady(Message):
    """The failure lab ran every probe over the windows embedded so far."""

    results: list[ProbeResult]
    ranked_count: int
    """How many windows the probes ranked over (fewer than the index holds while it embeds)."""
    window_count: int


class PromptReady(Message):
    """The prompt an LLM would get for the query on screen was assembled and counted."""

    def __init__(self, preview: PromptPreview) -> None:
        super().__init__()
        self.preview = preview


HandlerT = TypeVar("HandlerT", bound=Callable[..., Any])


def while_shown(handler: HandlerT) -> HandlerT:
    """Skip ``handler`` once the app's panes are gone: at shutdown, events the workers posted earlier
    are still delivered after the widgets they update were removed."""

    @functools.wraps(handler)
    def guarded(app: App[Any], message: Message) -> Any:
        if not app.query("#panes"):
            return None
        return handler(app, message)

    return cast(HandlerT, guarded)


# Configuration B (``v``): its own process's events and rankings, tagged with which B they are for.


class VersusWindowsCut(Message):
    """B's windows were cut from the corpus."""

    def __init__(self, generation: int, windows: list[Window], texts: list[str]) -> None:
        super().__init__()
        self.generation = generation
        self.windows = windows
        self.texts = texts


@dataclass
class VersusEvent(Message):
    """An event of B's embedding process (the same events as A's, handled apart)."""

    generation: int
    event: ProcessEvent


@dataclass
class VersusRanked(Message):
    """B ranked the standing question, and each side's hits were followed into the other."""

    generation: int
    ranking: VersusRanking


# The eval grid (``x``), run as a child command.


@dataclass
class GridStepped(Message):
    """The grid started another configuration."""

    child: GridChild
    step: GridProgress


@dataclass
class GridDone(Message):
    """The grid's child ended: its exit code, its report (table and chart), its last complaints."""

    child: GridChild
    code: int
    report: str
    errors: tuple[str, ...]
