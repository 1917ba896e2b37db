"""The embedding process with the real bundled model agrees with the model loaded in-process."""

from __future__ import annotations

import numpy as np
import pytest

from raglens.embedding import SentenceTransformerEmbedder
from raglens.embedding_events import QueryEmbedded, VectorsEmbedded, WindowsDone
from raglens.embedding_process import EmbeddingProcess

pytestmark = pytest.mark.model


def test_the_process_serves_the_bundled_model(real_embedder: SentenceTransformerEmbedder) -> None:
    process = EmbeddingProcess(device="cpu")
    try:
        ready = process.wait_until_ready(timeout=300)
        assert (ready.name, ready.dimension, ready.max_seq_length) == ("all-MiniLM-L6-v2", 384, 256)
        texts = ["A queue holds jobs.", "def lease(self):\n    return None\n", "Wie starte ich einen Worker?"]
        windows = process.embed_windows(texts)
        query = process.embed_query("how is a job leased?")
        vectors: list[np.ndarray] = []
        query_vector = None
        while True:
            event = process.next_event(timeout=120)
            assert event is not None
            if isinstance(event, VectorsEmbedded) and event.request_id == windows:
                vectors.append(event.vectors)
            elif isinstance(event, QueryEmbedded) and event.request_id == query:
                query_vector = event.vector
            elif isinstance(event, WindowsDone) and event.request_id == windows:
                break
        while query_vector is None:
            event = process.next_event(timeout=120)
            assert event is not None
            if isinstance(event, QueryEmbedded):
                query_vector = event.vector
        np.testing.assert_allclose(np.concatenate(vectors), real_embedder.encode(texts), atol=1e-5)
        expected_query = real_embedder.encode_query("how is a job leased?")
        np.testing.assert_allclose(query_vector, expected_query, atol=1e-5)
    finally:
        process.close()
