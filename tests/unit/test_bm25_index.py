"""BM25 as a configuration: its tokens, and its scores against an independent statement of the formula."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from raglens.bm25_index import BM25Index, identifier_tokens
from raglens.configuration import RetrievalConfig
from raglens.errors import BadInputError
from raglens.windows import Unit, Window, WindowParams


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("compute_backoff_delay(3)", ["compute", "backoff", "delay", "compute_backoff_delay", "3"]),
        ("drainPendingJobs", ["drain", "pending", "jobs", "drainpendingjobs"]),
        ("HTTPServer parse", ["http", "server", "httpserver", "parse"]),
        ("__init__", ["init"]),
        ("Größe über utf8", ["größe", "über", "utf8"]),
        ("a-b, c.d", ["a", "b", "c", "d"]),
    ],
)
def test_identifiers_split_on_underscores_and_camel_case_and_compounds_are_kept_whole(
    text: str, tokens: list[str]
) -> None:
    assert identifier_tokens(text) == tokens


def lucene_bm25(
    documents: list[list[str]], query: list[str], k1: float = 1.5, b: float = 0.75
) -> list[float]:
    """Lucene's BM25, written out: idf ln(1 + (N - df + 0.5) / (df + 0.5)), tf saturated by length."""
    count = len(documents)
    average = sum(len(document) for document in documents) / count
    scores = []
    for document in documents:
        score = 0.0
        for term in query:
            frequency = document.count(term)
            if not frequency:
                continue
            df = sum(term in other for other in documents)
            idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
            score += idf * frequency / (frequency + k1 * (1 - b + b * len(document) / average))
        scores.append(score)
    return scores


def index_of(texts: list[str]) -> BM25Index:
    windows = [Window(f"f{row}.txt", Unit.CHARS, 0, 0, len(text), 1, 1) for row, text in enumerate(texts)]
    return BM25Index(windows, {f"f{row}.txt": text for row, text in enumerate(texts)})


words = st.sampled_from(["job", "queue", "retry", "lease", "backoff", "worker", "the", "a"])


@given(
    st.lists(st.lists(words, min_size=1, max_size=12), min_size=1, max_size=8),
    st.lists(words, min_size=1, max_size=4, unique=True),
)
def test_scores_match_lucene_bm25_written_out(documents: list[list[str]], query: list[str]) -> None:
    scores = index_of([" ".join(document) for document in documents]).scores(" ".join(query))
    expected = [score if score > 0 else -math.inf for score in lucene_bm25(documents, query)]
    np.testing.assert_allclose(scores, expected, rtol=1e-5, atol=1e-6)


def test_an_exact_identifier_ranks_the_window_that_defines_it_first_and_ties_keep_corpus_order() -> None:
    index = index_of(
        [
            "compute the delay before a retry",
            "def compute_backoff_delay(attempt): return 2 ** attempt",
            "nothing shared here",
            "nothing shared here",
        ]
    )
    result = index.search("compute_backoff_delay", 4)
    assert [hit.row for hit in result.hits] == [1, 0] and not result.cosine
    assert result.ranked_count == 2, "a window sharing no token with the query is not retrieved"
    assert result.bar_fraction(result.hits[0].score) == 1.0
    assert index.search("?! ::", 4).hits == (), "a query of no tokens retrieves nothing"
    assert index.search("lighthouse", 4).hits == ()


def test_an_answer_bm25_does_not_retrieve_has_no_rank_though_k_windows_are_not_filled() -> None:
    from raglens.diagnostics.evaluation import evaluate_case, resolve_refs
    from raglens.diagnostics.golden import ExpectedRef, GoldenCase

    texts = ["retry the job", "lease the worker", "nothing here"]
    index = index_of(texts)
    golden = GoldenCase(1, "retry", (ExpectedRef("f2.txt"),))
    resolved = resolve_refs([golden], {f"f{row}.txt": text for row, text in enumerate(texts)})
    result = evaluate_case(golden, index.scores("retry"), index.windows, resolved, 3)
    assert result.ref_ranks == (None,) and result.recall == 0.0 and result.ndcg == 0.0
    assert [hit.citation for hit in result.hits] == ["f0.txt:L1-L1"]


def test_bm25_settings_that_mean_nothing_are_refused_and_names_are_normalised() -> None:
    params = WindowParams()
    with pytest.raises(BadInputError, match="bm25 has no max_seq_length"):
        RetrievalConfig(params, "bm25", max_seq_length=128)
    with pytest.raises(BadInputError, match="bm25 has no bf16 precision"):
        RetrievalConfig(params, "BM25", precision="bf16")
    assert RetrievalConfig(params, " BM25 ").model == "bm25"
    assert RetrievalConfig(params, "all-MiniLM-L6-v2").model is None, "the bundled model, offline"
    assert RetrievalConfig(params, "sentence-transformers/all-MiniLM-L6-v2").model is None
