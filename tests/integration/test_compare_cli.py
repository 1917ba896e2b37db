"""``search --vs``: B's hits equal an independent naive-RAG run with B's windows and model settings,
and every hit's rank in the other ranking follows its text there."""

from __future__ import annotations

import json

import numpy as np
import pytest

from raglens.cli.main import main
from raglens.corpus import CorpusOptions, load_corpus
from raglens.embedding import SentenceTransformerEmbedder, default_model_path
from raglens.engine import Engines
from raglens.windows import Unit, Window, WindowParams, cut_corpus
from tests.conftest import SAMPLE_CORPUS
from tests.fakes import HashingEmbedder

QUERY = "how are failed jobs retried with backoff"
FAKE = ("--embedder-factory", "tests.fakes:HashingEmbedder")


def search_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:  # type: ignore[type-arg]
    code = main(["search", str(SAMPLE_CORPUS), QUERY, "--json", "-q", "--no-cache", *argv])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    document: dict = json.loads(captured.out)  # type: ignore[type-arg]
    return document


def naive_rag(
    windows: list[Window], texts: dict[str, str], vectors: np.ndarray, query: np.ndarray
) -> np.ndarray:
    """Scores of every window: the brute-force reference (vectors already unit length)."""
    assert len(vectors) == len(windows) and set(w.path for w in windows) <= set(texts)
    return vectors @ query


def reference_ranks(scores: np.ndarray) -> list[int]:
    """1-based ranks written out plainly: better scores first, ties in corpus order."""
    return [
        1 + sum(1 for other, s in enumerate(scores) if s > score or (s == score and other < row))
        for row, score in enumerate(scores)
    ]


def followed_rank(window: dict, other_windows: list[Window], other_ranks: list[int]) -> int | None:  # type: ignore[type-arg]
    """The same window's rank when the other side has it, else the best rank over the same text."""
    for row, other in enumerate(other_windows):
        if (other.path, other.start, other.end) == (window["path"], window["start"], window["end"]):
            return other_ranks[row]
    ranks = [
        other_ranks[row]
        for row, other in enumerate(other_windows)
        if other.path == window["path"] and other.start < window["end"] and window["start"] < other.end
    ]
    return min(ranks) if ranks else None


def test_vs_ranks_b_as_an_independent_run_with_b_windows_would(capsys: pytest.CaptureFixture[str]) -> None:
    document = search_json(capsys, *FAKE, "--vs", "size=500,overlap=50")
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    texts = corpus.texts()
    embedder = HashingEmbedder()
    query = embedder.encode_query(QUERY)
    sides = {}
    for name, params in (
        ("a", WindowParams(Unit.CHARS, 1000, 200)),
        ("b", WindowParams(Unit.CHARS, 500, 50)),
    ):
        windows = cut_corpus(corpus, params)
        vectors = embedder.encode([w.text_in(texts[w.path]) for w in windows])
        scores = naive_rag(windows, texts, vectors, query)
        sides[name] = (windows, scores, reference_ranks(scores))
    b_windows, b_scores, b_ranks = sides["b"]
    a_windows, _, a_ranks = sides["a"]
    versus = document["vs"]
    assert versus["parameters"]["size"] == 500 and versus["parameters"]["overlap"] == 50
    assert versus["window_count"] == len(b_windows)
    expected = sorted(range(len(b_windows)), key=lambda row: b_ranks[row])[:5]
    assert [hit["citation"] for hit in versus["hits"]] == [b_windows[row].citation for row in expected]
    assert [hit["score"] for hit in versus["hits"]] == pytest.approx(
        [float(b_scores[row]) for row in expected], abs=1e-6
    )
    for hit in document["hits"]:
        assert hit["rank_in_other"] == followed_rank(hit, b_windows, b_ranks)
    for hit in versus["hits"]:
        assert hit["rank_in_other"] == followed_rank(hit, a_windows, a_ranks)
    shared = sum(hit["rank_in_other"] is not None and hit["rank_in_other"] <= 5 for hit in document["hits"])
    assert versus["shared_in_top_k"] == shared


def test_the_human_output_shows_both_sides_and_the_overlap(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["search", str(SAMPLE_CORPUS), QUERY, "-q", "--no-cache", *FAKE, "--vs", "unit=lines"])
    out = capsys.readouterr().out
    assert code == 0
    assert "A  1000/200 chars" in out and "B  40/8 lines" in out
    assert "top-5 overlap:" in out


@pytest.mark.parametrize(
    ("spec", "message"),
    [("size=big", "size must be a whole number"), ("colour=red", "unknown key"), ("overlap=2000", "smaller")],
)
def test_a_bad_vs_is_one_line_before_anything_loads(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, spec: str, message: str
) -> None:
    from raglens.cli import searching

    monkeypatch.setattr(searching, "prepare_index", lambda *a: pytest.fail("the corpus was indexed"))
    code = main(["search", str(SAMPLE_CORPUS), QUERY, "--vs", spec])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1, err


@pytest.mark.model
def test_vs_max_seq_length_512_reads_the_whole_window_as_sentence_transformers_does(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    real_embedder: SentenceTransformerEmbedder,
) -> None:
    """B reads 512 tokens: its hits are those of a plain SentenceTransformer told the same."""
    from sentence_transformers import SentenceTransformer

    opened = Engines._open_model
    monkeypatch.setattr(
        Engines,
        "_open_model",
        lambda engines: real_embedder if engines.choice.max_seq_length is None else opened(engines),
    )
    document = search_json(capsys, "--vs", "max_seq_length=512")
    versus = document["vs"]
    assert versus["model"]["max_seq_length"] == 512 and document["model"]["max_seq_length"] == 256
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    texts = corpus.texts()
    windows = cut_corpus(corpus, WindowParams())
    reference = SentenceTransformer(str(default_model_path()), device="cpu")
    reference.max_seq_length = 512
    vectors = reference.encode([w.text_in(texts[w.path]) for w in windows], normalize_embeddings=True)
    query = reference.encode([QUERY], normalize_embeddings=True)[0]
    scores = naive_rag(windows, texts, vectors, query)
    ranks = reference_ranks(scores)
    expected = sorted(range(len(windows)), key=lambda row: ranks[row])[:5]
    assert [hit["citation"] for hit in versus["hits"]] == [windows[row].citation for row in expected]
    assert [hit["score"] for hit in versus["hits"]] == pytest.approx(
        [float(scores[row]) for row in expected], abs=1e-4
    )
    for hit in document["hits"]:  # the same windows: each hit's rank in B is its own window's rank there
        assert (
            hit["rank_in_other"]
            == ranks[next(r for r, w in enumerate(windows) if w.citation == hit["citation"])]
        )
