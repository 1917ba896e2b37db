"""Token shares of a score: they add up to the pooled cosine, for any token vectors, and read as words."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from raglens.attribution import (
    Explanation,
    TextWords,
    TokenKind,
    TokenShare,
    TokenStates,
    Unexplained,
    explain_pair,
    explain_with,
    phrase_spans,
    pooling_refusal,
    word_shares,
)
from raglens.bm25_index import BM25Scorer
from tests.fakes import HashingEmbedder

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=32)


def states(vectors: np.ndarray) -> TokenStates:
    count = vectors.shape[0]
    text = "x" * count
    return TokenStates(
        text, tuple(f"t{i}" for i in range(count)), tuple((i, i + 1) for i in range(count)), vectors
    )


def pooled(vectors: np.ndarray) -> np.ndarray:
    mean = vectors.astype(np.float64).mean(axis=0)
    unit: np.ndarray = mean / np.linalg.norm(mean)
    return unit


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 12).flatmap(
        lambda d: st.tuples(
            arrays(np.float32, st.tuples(st.integers(1, 9), st.just(d)), elements=finite),
            arrays(np.float32, st.tuples(st.integers(1, 40), st.just(d)), elements=finite),
        )
    )
)
def test_the_shares_add_up_to_the_pooled_cosine_for_any_token_vectors(
    pair: tuple[np.ndarray, np.ndarray],
) -> None:
    query, window = pair
    if (
        np.linalg.norm(query.astype(np.float64).mean(0)) < 1e-3
        or np.linalg.norm(window.astype(np.float64).mean(0)) < 1e-3
    ):
        return  # a mean of (nearly) zero has no direction: no cosine to take apart
    explanation = explain_pair(states(query), states(window))
    cosine = float(pooled(query) @ pooled(window))
    assert explanation.total == pytest.approx(cosine, abs=1e-9)
    assert sum(s.contribution for s in explanation.window_tokens) == pytest.approx(cosine, abs=1e-9)
    assert sum(s.contribution for s in explanation.query_tokens) == pytest.approx(cosine, abs=1e-9)
    assert (
        len(explanation.window_tokens) == window.shape[0] and len(explanation.query_tokens) == query.shape[0]
    )


def test_a_token_that_points_away_from_the_query_has_a_negative_share() -> None:
    query = states(np.array([[1.0, 0.0]], np.float32))
    window = states(np.array([[1.0, 0.0], [1.0, 0.0], [-0.5, 0.0], [0.0, 1.0]], np.float32))
    shares = [s.contribution for s in explain_pair(query, window).window_tokens]
    assert shares[0] > 0 and shares[2] < 0 and shares[3] == 0.0


def test_the_fake_embedders_shares_add_up_to_its_own_cosine() -> None:
    embedder = HashingEmbedder()
    question, text = (
        "how are jobs retried after a failure",
        "Jobs are retried: a failed job waits, then runs again.",
    )
    explanation = explain_with(embedder, question, text)
    assert isinstance(explanation, Explanation)
    cosine = float(embedder.encode_query(question) @ embedder.encode([text])[0])
    assert explanation.residual(cosine) == pytest.approx(0.0, abs=1e-6)


def test_an_engine_without_token_vectors_says_so() -> None:
    class VectorsOnly:
        name = "vectors-only"

    answer = explain_with(VectorsOnly(), "q", "text")
    assert isinstance(answer, Unexplained) and "vectors-only" in answer.reason


@pytest.mark.parametrize(
    ("text", "span", "kind"),
    [
        ("x [CLS]", None, TokenKind.SPECIAL),
        ("a: b", (1, 2), TokenKind.PUNCTUATION),
        ('end."""', (3, 7), TokenKind.PUNCTUATION),
        ("the job", (0, 3), TokenKind.STOP_WORD),
        ("isinstance(x)", (0, 2), TokenKind.CONTENT),  # the piece "is" of a longer word is content
        ("a job", (1, 5), TokenKind.CONTENT),  # a SentencePiece token starts on the space before its word
        ("a   ", (1, 3), TokenKind.PUNCTUATION),  # blanks only: no word holds it
    ],
)
def test_a_token_is_of_the_kind_of_the_word_that_holds_it(
    text: str, span: tuple[int, int] | None, kind: TokenKind
) -> None:
    assert TextWords(text).kind_of(span) is kind


def test_the_bundled_tokenizers_pieces_take_their_words_kind() -> None:
    from raglens.embedding import default_model_path
    from raglens.tokens import load_tokenizer

    tokenizer = load_tokenizer(default_model_path(), "all-MiniLM-L6-v2")
    text = "if isinstance(job, Job) and job.has_more: return the Straße"
    encoding = tokenizer.encode(text, add_special_tokens=False)
    words = TextWords(text)
    kinds = {
        token: words.kind_of(span) for token, span in zip(encoding.tokens, encoding.offsets, strict=True)
    }
    assert kinds["is"] is TokenKind.CONTENT, encoding.tokens  # of isinstance
    assert kinds["has"] is TokenKind.CONTENT  # of has_more
    assert kinds["the"] is TokenKind.STOP_WORD and kinds["and"] is TokenKind.STOP_WORD


def test_a_phrase_is_found_in_the_original_text_as_a_whole_word() -> None:
    text = "Straße parse_config() and a valid id"
    assert phrase_spans(text, "parse_config") == [(7, 19)]
    assert phrase_spans(text, "PARSE_CONFIG") == [(7, 19)]
    assert phrase_spans(text, "id") == [(34, 36)], "not the id inside valid"
    assert phrase_spans(text, " ") == []


def share(token: str, start: int | None, end: int | None, value: float) -> TokenShare:
    return TokenShare(token, start, end, value, TokenKind.SPECIAL if start is None else TokenKind.CONTENT)


def test_word_pieces_add_up_into_their_word_and_repeats_into_one_entry() -> None:
    text = "drain_pending_jobs(queue); drain_pending_jobs"
    shares = [
        share("[CLS]", None, None, 0.01),
        share("drain", 0, 5, 0.1),
        share("_", 5, 6, 0.01),
        share("pending", 6, 13, 0.2),
        share("_", 13, 14, 0.01),
        share("jobs", 14, 18, 0.3),
        share("(", 18, 19, -0.02),
        share("queue", 19, 24, 0.05),
        share(");", 24, 26, 0.0),
        share("drain", 27, 32, 0.05),
        share("##_pending_jobs", 32, 45, 0.05),
        share("[SEP]", None, None, 0.02),
    ]
    words = {w.word: w for w in word_shares(text, shares)}
    assert words["drain_pending_jobs"].contribution == pytest.approx(0.72)
    assert words["drain_pending_jobs"].count == 2
    assert words["[CLS]"].kind is TokenKind.SPECIAL and words["("].kind is TokenKind.PUNCTUATION
    assert sum(w.contribution for w in words.values()) == pytest.approx(sum(s.contribution for s in shares))
    in_order = word_shares(text, shares, merge_repeats=False)
    assert [w.word for w in in_order] == [
        "[CLS]",
        "drain_pending_jobs",
        "(",
        "queue",
        ");",
        "drain_pending_jobs",
        "[SEP]",
    ]


def test_pooling_refusals() -> None:
    assert pooling_refusal(["Transformer", "Pooling", "Normalize"], "mean") is None
    assert pooling_refusal(["sentence_transformers.models.Transformer", "Pooling"], "mean") is None
    cls = pooling_refusal(["Transformer", "Pooling", "Normalize"], "cls")
    assert cls is not None and cls.reason.startswith("no exact attribution for cls pooling")
    assert pooling_refusal(["Transformer", "Pooling"], "lasttoken") is not None
    dense = pooling_refusal(["Transformer", "Pooling", "Dense", "Normalize"], "mean")
    assert dense is not None and "Dense" in dense.reason


def test_bm25_is_taken_apart_by_query_term_and_adds_up_to_its_score() -> None:
    texts = [
        "def drain_pending_jobs(queue):\n    while queue.pending():\n        queue.drain()\n",
        "The queue drains pending jobs when the worker stops.",
        "Nothing to see here at all.",
    ]
    scorer = BM25Scorer(texts)
    question = "how does drain_pending_jobs drain the queue?"
    scores = scorer.scores(question)
    for row in (0, 1):
        explanation = scorer.explain(question, row)
        assert explanation.total == pytest.approx(float(scores[row]), rel=1e-5)
        assert sum(s.contribution for s in explanation.window_tokens) == pytest.approx(
            explanation.total, rel=1e-5
        )
        for token in explanation.window_tokens:
            assert texts[row][token.start : token.end].lower().replace("_", "") == token.token.replace(
                "_", ""
            )
    terms = {s.token: s.contribution for s in scorer.explain(question, 0).query_tokens}
    assert terms["how"] == 0.0, "a term the window lacks adds nothing"
    assert terms["drain_pending_jobs"] > terms["queue"] > 0, "the rare compound outweighs a common word"


def test_the_exactness_line_says_the_residual_and_that_it_cannot_tell_why() -> None:
    from raglens.attribution import describe_exactness

    explanation = Explanation("exact: mean pooling", 0.5, (), ())
    assert describe_exactness(explanation, 0.5 + 2e-8).endswith(
        "the shares sum to the score shown, within 2e-08"
    )
    approximate = describe_exactness(explanation, 0.497)
    assert "+3.0e-03 from the score shown (0.4970)" in approximate and "cannot tell which" in approximate
    assert "not ranked" in describe_exactness(explanation, None)
