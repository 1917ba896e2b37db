"""What the embedding process reports, as plain values that need neither numpy nor the model to import.

The app imports these before its first frame; numpy and everything heavy come later, off the UI thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class ReadingExtent:
    """How much of one text the model actually reads before it truncates."""

    token_count: int
    """Tokens of the text, without the model's special tokens."""
    chars_read: int
    """Characters from the start inside the model's token limit; the whole length if nothing is cut."""


@dataclass(frozen=True)
class ModelReady:
    """The process has loaded its model."""

    name: str
    dimension: int
    max_seq_length: int | None
    device: str
    precision: str = "fp32"


@dataclass(frozen=True)
class ModelFailed:
    """The model could not be loaded, or failed while embedding; the process has exited."""

    message: str


@dataclass(frozen=True)
class QueryEmbedded:
    """The vector of one submitted query."""

    request_id: int
    vector: np.ndarray


@dataclass(frozen=True)
class VectorsEmbedded:
    """The vectors of ``len(vectors)`` texts of one window request, from position ``start``."""

    request_id: int
    start: int
    vectors: np.ndarray
    extents: tuple[ReadingExtent, ...]
    """Token count and characters read of each text of the batch."""


@dataclass(frozen=True)
class WindowsDone:
    """Every text of a window request has its vectors."""

    request_id: int


@dataclass(frozen=True)
class RequestCancelled:
    """A window request was cancelled; no more vectors of it will come."""

    request_id: int


@dataclass(frozen=True)
class ProcessEnded:
    """The process is gone: shut down, crashed or killed."""

    exit_code: int | None


@dataclass(frozen=True)
class CacheTrouble:
    """The process could not use the vector cache as intended; it carries on (see the message)."""

    message: str


ProcessEvent = (
    ModelReady
    | ModelFailed
    | QueryEmbedded
    | VectorsEmbedded
    | WindowsDone
    | RequestCancelled
    | CacheTrouble
    | ProcessEnded
)
