"""Facts the background workers report to the app; the app's handlers own every piece of state."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # the search result holds numpy arrays; numpy loads after the first frame
    from raglens.corpus import Corpus
    from raglens.diagnostics.probes import ProbePlan, ProbeResult
    from raglens.diagnostics.prompt import PromptPreview
    from raglens.diagnostics.query_report import QueryDiagnostics
    from raglens.embedding_events import ProcessEvent
    from raglens.embedding_process import EmbeddingProcess
    from raglens.errors import RaglensError
    from raglens.pipeline import CacheLookup
    from raglens.search import SearchResult
    from raglens.ui.widgets.hit_list import HitExcerpt
    from raglens.windows import Window, WindowParams


class CorpusLoaded(Message):
    """The corpus was read and cut into windows."""

    def __init__(
        self,
        corpus: Corpus,
        params: WindowParams,
        windows: list[Window],
        texts: list[str],
        lookup: CacheLookup | None = None,
    ) -> None:
        super().__init__()
        self.corpus = corpus
        self.params = params
        self.windows = windows
        self.texts = texts
        self.lookup = lookup
        """What the vector cache had for these windows; None without a cache."""


class CorpusFailed(Message):
    """The corpus could not be read, or holds nothing to index."""

    def __init__(self, error: RaglensError) -> None:
        super().__init__()
        self.error = error


class EmbedderStarted(Message):
    """The embedding process was started; it loads its model in the background."""

    def __init__(self, process: EmbeddingProcess) -> None:
        super().__init__()
        self.process = process


class EmbedderReported(Message):
    """The embedding process sent an event: model ready, vectors, a query vector, a failure."""

    def __init__(self, event: ProcessEvent) -> None:
        super().__init__()
        self.event = event


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


class ProbesPlanned(Message):
    """The failure lab chose its probes; the plan's queries must be embedded before they can run."""

    def __init__(self, plan: ProbePlan) -> None:
        super().__init__()
        self.plan = plan


class ProbesReady(Message):
    """The failure lab ran every probe over the windows embedded so far."""

    def __init__(self, results: list[ProbeResult]) -> None:
        super().__init__()
        self.results = results


class PromptReady(Message):
    """The prompt an LLM would get for the query on screen was assembled and counted."""

    def __init__(self, preview: PromptPreview) -> None:
        super().__init__()
        self.preview = preview
