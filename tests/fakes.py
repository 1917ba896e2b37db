"""A deterministic stand-in for the embedding model, for fast tests of everything around it."""

from __future__ import annotations

import re
import time
import zlib
from collections.abc import Sequence

import numpy as np

from raglens.attribution import TokenStates, Unexplained
from raglens.embedding import normalize_rows
from raglens.embedding_events import ReadingExtent
from raglens.errors import ModelLoadError

_TOKEN = re.compile(r"\w+")


class HashingEmbedder:
    """Bag-of-words vectors: each lower-cased word adds one to a CRC32-chosen dimension."""

    name = "fake-hashing"
    device = "cpu"

    def __init__(self, dimension: int = 64, max_seq_length: int | None = 128) -> None:
        self._dimension = dimension
        self._max_seq_length = max_seq_length
        self.encoded_batches: list[int] = []
        """The size of every batch encode() was called with, for tests of batching."""

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def max_seq_length(self) -> int | None:
        return self._max_seq_length

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.encoded_batches.append(len(texts))
        vectors = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _TOKEN.findall(text.lower()):
                vectors[row, zlib.crc32(token.encode()) % self._dimension] += 1.0
        return normalize_rows(vectors)

    def encode_query(self, query: str) -> np.ndarray:
        vector: np.ndarray = self.encode([query])[0]
        return vector

    def token_states(self, text: str) -> TokenStates | Unexplained:
        """Each word as one token whose vector is its one-hot dimension: their mean pools to encode()'s."""
        words = list(_TOKEN.finditer(text.lower()))
        if not words:
            return Unexplained("a text of no words has no tokens")
        vectors = np.zeros((len(words), self._dimension), dtype=np.float32)
        for position, word in enumerate(words):
            vectors[position, zlib.crc32(word.group().encode()) % self._dimension] = 1.0
        spans = tuple((word.start(), word.end()) for word in words)
        return TokenStates(text, tuple(word.group() for word in words), spans, vectors)

    def reading_extents(self, texts: Sequence[str]) -> list[ReadingExtent]:
        """Every word is a token; reading stops after ``max_seq_length - 2`` of them, as with BERT."""
        extents = []
        for text in texts:
            words = list(_TOKEN.finditer(text))
            limit = None if self._max_seq_length is None else self._max_seq_length - 2
            cut = limit is not None and len(words) > limit
            extents.append(ReadingExtent(len(words), words[limit - 1].end() if cut and limit else len(text)))
        return extents


class SlowHashingEmbedder(HashingEmbedder):
    """A hashing embedder that takes 50 ms per batch, so requests can overtake a stream of batches."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        time.sleep(0.05)
        return super().encode(texts)


def failing_embedder() -> HashingEmbedder:
    """A factory that fails as a model load would."""
    raise ModelLoadError("this model cannot be loaded (on purpose)")


class BreakingHashingEmbedder(HashingEmbedder):
    """A hashing embedder that raises on any text containing ``BREAK``, as a model failing mid-stream."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if any("BREAK" in text for text in texts):
            raise RuntimeError("the fake model broke")
        return super().encode(texts)


class PacedHashingEmbedder(HashingEmbedder):
    """A hashing embedder that takes 150 ms per batch, so a query lands while the index fills."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) > 1:
            time.sleep(0.15)
        return super().encode(texts)


class StalledAfterFirstBatchEmbedder(HashingEmbedder):
    """Embeds the first batch of windows, then hangs: the app stays 'indexing' for a snapshot."""

    def __init__(self) -> None:
        super().__init__()
        self._batches = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) > 1:
            self._batches += 1
            # The first batch takes long enough for the app's query to be waiting when it ends, so
            # the query is answered before the second batch hangs.
            time.sleep(0.3 if self._batches == 1 else 3600)
        return super().encode(texts)


def never_loading_embedder() -> HashingEmbedder:
    """A model that never finishes loading: the app stays at 'loading the model'."""
    time.sleep(3600)
    raise AssertionError("unreachable")


class SlowQueryHashingEmbedder(HashingEmbedder):
    """A hashing embedder that takes 20 ms per query, so an eval of a few hundred cases lasts seconds."""

    def encode_query(self, query: str) -> np.ndarray:
        time.sleep(0.02)
        return super().encode_query(query)
