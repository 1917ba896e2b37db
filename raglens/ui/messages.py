"""Facts the background workers report to the app; the app's handlers own every piece of state."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from textual.message import Message

from raglens.embedding_events import ProcessEvent

if TYPE_CHECKING:  # the search result holds numpy arrays; numpy loads after the first frame
    from pathlib import Path

    import numpy as np
    from textual.app import App

    from raglens.attribution import Attribution
    from raglens.compare import VersusRanking
    from raglens.corpus import Corpus
    from raglens.corpus_memo import MemoToSave
    from raglens.diagnostics.coverage import CorpusCoverage
    from raglens.diagnostics.golden_writer import NewCase
    from raglens.diagnostics.probes import ProbeResult
    from raglens.diagnostics.prompt import PromptPreview
    from raglens.diagnostics.query_report import QueryDiagnostics
    from raglens.errors import RaglensError
    from raglens.search import SearchResult
    from raglens.stored_index import IndexPlace
    from raglens.ui.screens.why import WhyScreen
    from raglens.ui.widgets.corpus_tree import FolderListing
    from raglens.ui.widgets.hit_list import HitExcerpt
    from raglens.windows import WindowParams, WindowSet


class CorpusLoaded(Message):
    """The corpus was read, for A's window settings ``params`` (its windows follow in WindowsCut)."""

    def __init__(self, corpus: Corpus, params: WindowParams, memo_to_save: MemoToSave | None = None) -> None:
        super().__init__()
        self.corpus = corpus
        self.params = params
        self.memo_to_save = memo_to_save
        """The memo of the files as read, to write once the cache's vectors are in (None: unchanged)."""


class CoverageMeasured(Message):
    """How much of each file the model reads, measured over A's window set ``generation``."""

    def __init__(self, generation: int, coverage: CorpusCoverage) -> None:
        super().__init__()
        self.generation = generation
        self.coverage = coverage


class CorpusFailed(Message):
    """The corpus could not be read, or holds nothing to index."""

    def __init__(self, error: RaglensError) -> None:
        super().__init__()
        self.error = error


@dataclass
class RunEvent(Message):
    """An event of one configuration's embedding process: which run, which of its processes, what."""

    run_id: int
    incarnation: int
    """Which of the run's processes reported it (each restart starts the next)."""
    event: ProcessEvent


@dataclass
class LanguageIdentifierReady(Message):
    """The language identifier is loaded (or failed to, ``error``): rankings can tell a question's
    language from now on."""

    error: str | None = None


@dataclass
class GoldenCaseChecked(Message):
    """The golden file does not hold the question yet: the user can choose the case's kind."""

    case: NewCase
    target: Path


@dataclass
class GoldenCaseDone(Message):
    """A golden case was saved, or refused (``saved`` False), as ``note`` says."""

    note: str
    saved: bool


@dataclass
class ControlsEmbedded(Message):
    """The off-topic control questions have their vectors: the noise band can be drawn."""

    vectors: dict[str, np.ndarray]


class RankingReady(Message):
    """A question was ranked against the windows embedded so far."""

    def __init__(
        self,
        question: int,
        query: str,
        result: SearchResult,
        excerpts: Sequence[HitExcerpt],
        diagnostics: QueryDiagnostics,
    ) -> None:
        super().__init__()
        self.question = question
        """The question's number: hits of any other question are never drawn under this one."""
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


class WhyReady(Message):
    """A configuration's process took the score apart for panel ``position`` of ``screen`` (None: the
    process ended before it answered)."""

    def __init__(self, screen: WhyScreen, position: int, answer: Attribution | None) -> None:
        super().__init__()
        self.screen = screen
        self.position = position
        self.answer = answer


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


class WindowsCut(Message):
    """A run's windows were cut from the corpus, with the window settings they were cut with."""

    def __init__(
        self,
        run_id: int,
        params: WindowParams,
        corpus: Corpus,
        window_set: WindowSet,
        index_place: IndexPlace | None = None,
        folders: FolderListing | None = None,
    ) -> None:
        super().__init__()
        self.run_id = run_id
        self.params = params
        self.corpus = corpus
        self.window_set = window_set
        self.index_place = index_place
        """Where the set's complete index is kept, and what was stored there (see ``stored_index``)."""
        self.folders = folders
        """The corpus pane's listing of the corpus's folders, made by the worker that read it."""


@dataclass
class VersusRanked(Message):
    """B ranked the question on screen, and each side's hits were followed into the other."""

    run_id: int
    ranking: VersusRanking
