"""The embedding process with the real bundled model agrees with the model loaded in-process."""

from __future__ import annotations

import numpy as np
import pytest

from raglens.embedding import SentenceTransformerEmbedder
from raglens.embedding_events import ModelChoice, VectorsEmbedded, WindowsDone
from raglens.embedding_process import EmbeddingProcess

pytestmark = pytest.mark.model


def test_the_process_serves_the_bundled_model(real_embedder: SentenceTransformerEmbedder) -> None:
    process = EmbeddingProcess(ModelChoice(device="cpu"))
    try:
        ready = process.wait_until_ready(timeout=300)
        assert (ready.name, ready.dimension, ready.max_seq_length) == ("all-MiniLM-L6-v2", 384, 256)
        assert (ready.precision, ready.engine) == ("fp32", "sentence-transformers"), "no cache: no export"
        texts = ["A queue holds jobs.", "def lease(self):\n    return None\n", "Wie starte ich einen Worker?"]
        process.index_windows(1, texts)
        query = process.embed_query("how is a job leased?")
        vectors: dict[int, np.ndarray] = {}
        while True:
            event = process.next_event(timeout=120)
            assert event is not None
            if isinstance(event, VectorsEmbedded):
                vectors.update(zip(event.rows, event.vectors, strict=True))
            elif isinstance(event, WindowsDone):
                break
        while not query.done():
            process.next_event(timeout=1)
        embedded = np.stack([vectors[row] for row in range(len(texts))])
        np.testing.assert_allclose(embedded, real_embedder.encode(texts), atol=1e-5)
        expected_query = real_embedder.encode_query("how is a job leased?")
        np.testing.assert_allclose(query.result(), expected_query, atol=1e-5)
    finally:
        process.close()
