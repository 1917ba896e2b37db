"""The steps of naive RAG as the CLI and the explorer narrate them; values only, cheap to import.

The explorer narrates a cache lookup on its UI thread: importing these must not import the pipeline.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from raglens.display import describe_age
from raglens.windows import WindowParams


@dataclass(frozen=True)
class FilesFound:
    """The corpus was listed and read."""

    file_count: int
    skipped_count: int

    def describe(self) -> str:
        return f"found {self.file_count} file(s) to index, skipped {self.skipped_count}"


@dataclass(frozen=True)
class WindowsCut:
    """Every file was cut into windows."""

    window_count: int
    params: WindowParams

    def describe(self) -> str:
        return f"cut into {self.window_count} window(s) of {self.params.describe()}"


@dataclass(frozen=True)
class VectorsFromCache:
    """Some windows already had vectors in the cache and will not be embedded again."""

    found: int
    total: int
    oldest: float | None = None
    """When the oldest of the found vectors was stored (seconds since the epoch)."""

    def describe(self) -> str:
        stored = ""
        if self.oldest is not None:
            stored = f" (oldest stored {describe_age(time.time() - self.oldest)} ago)"
        to_embed = self.total - self.found
        return f"{self.found} of {self.total} window(s) from the cache{stored}; {to_embed} to embed"


@dataclass(frozen=True)
class WindowsEmbedded:
    """Another batch of windows has its vectors."""

    done: int
    total: int
    model: str

    def describe(self) -> str:
        return f"embedded {self.done}/{self.total} window(s) via {self.model}"


@dataclass(frozen=True)
class IndexTaken:
    """The whole index was stored when these files were last read, unchanged since: no text is looked
    up or embedded (see ``stored_index``)."""

    window_count: int

    def describe(self) -> str:
        return (
            f"vectors: all {self.window_count} from the index kept when these files were last read "
            "(none changed since)"
        )


@dataclass(frozen=True)
class IndexReady:
    """Every window is embedded; the index can be searched in full."""

    window_count: int
    dimension: int

    def describe(self) -> str:
        return f"index ready: {self.window_count} vector(s) of {self.dimension} dimensions"


PipelineStep = FilesFound | WindowsCut | VectorsFromCache | IndexTaken | WindowsEmbedded | IndexReady
