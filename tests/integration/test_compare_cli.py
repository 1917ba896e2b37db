"""``search --vs``: B's hits equal an independent naive-RAG run with B's windows and model settings,
and every hit's rank in the other ranking follows its text there."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

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


def a_gets_the_loaded_model(
    monkeypatch: pytest.MonkeyPatch, real_embedder: SentenceTransformerEmbedder
) -> None:
    """A (the bundled model with its own settings) gets the session's loaded model; B opens its own."""
    opened = Engines._open_model

    def open_model(engines: Engines) -> object:
        choice = engines.choice
        return real_embedder if choice.model is None and choice.max_seq_length is None else opened(engines)

    monkeypatch.setattr(Engines, "_open_model", open_model)


@pytest.mark.model
def test_vs_max_seq_length_512_reads_the_whole_window_as_sentence_transformers_does(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    real_embedder: SentenceTransformerEmbedder,
) -> None:
    """B reads 512 tokens: its hits are those of a plain SentenceTransformer told the same."""
    from sentence_transformers import SentenceTransformer

    a_gets_the_loaded_model(monkeypatch, real_embedder)
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


@pytest.fixture
def cls_pooled_model(tmp_path: Path) -> Path:
    """A second model built here, with nothing downloaded: the bundled one with CLS pooling."""
    source = default_model_path()
    folder = tmp_path / "minilm-cls"
    for path in source.rglob("*"):
        target = folder / path.relative_to(source)
        if path.is_dir():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.name == "model.safetensors":
            target.symlink_to(path)  # 87 MB: read in place
        else:
            shutil.copyfile(path, target)
    pooling = folder / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text(encoding="utf-8"))
    config.update(pooling_mode_cls_token=True, pooling_mode_mean_tokens=False)
    pooling.write_text(json.dumps(config), encoding="utf-8")
    return folder


@pytest.mark.model
def test_vs_another_model_folder_ranks_as_that_model_does(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    real_embedder: SentenceTransformerEmbedder,
    cls_pooled_model: Path,
) -> None:
    from sentence_transformers import SentenceTransformer

    a_gets_the_loaded_model(monkeypatch, real_embedder)
    document = search_json(capsys, "--vs", f"model={cls_pooled_model}")
    versus = document["vs"]
    assert versus["model"]["name"] == "minilm-cls"
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    texts = corpus.texts()
    windows = cut_corpus(corpus, WindowParams())
    reference = SentenceTransformer(str(cls_pooled_model), device="cpu")
    vectors = reference.encode([w.text_in(texts[w.path]) for w in windows], normalize_embeddings=True)
    scores = naive_rag(windows, texts, vectors, reference.encode([QUERY], normalize_embeddings=True)[0])
    ranks = reference_ranks(scores)
    expected = sorted(range(len(windows)), key=lambda row: ranks[row])[:5]
    assert [hit["citation"] for hit in versus["hits"]] == [windows[row].citation for row in expected]
    assert [hit["score"] for hit in versus["hits"]] == pytest.approx(
        [float(scores[row]) for row in expected], abs=1e-4
    )
    assert [hit["citation"] for hit in versus["hits"]] != [hit["citation"] for hit in document["hits"]] or [
        hit["score"] for hit in versus["hits"]
    ] != [hit["score"] for hit in document["hits"]], "CLS pooling ranks differently from mean pooling"


def test_expect_reports_where_the_answer_ranks_in_a_and_in_b(capsys: pytest.CaptureFixture[str]) -> None:
    document = search_json(capsys, *FAKE, "--vs", "size=500,overlap=50", "--expect", "docs/retries.md")
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    texts = corpus.texts()
    embedder = HashingEmbedder()
    query = embedder.encode_query(QUERY)
    best = []
    for params in (WindowParams(Unit.CHARS, 1000, 200), WindowParams(Unit.CHARS, 500, 50)):
        windows = cut_corpus(corpus, params)
        ranks = reference_ranks(
            naive_rag(windows, texts, embedder.encode([w.text_in(texts[w.path]) for w in windows]), query)
        )
        best.append(min(rank for rank, w in zip(ranks, windows, strict=True) if w.path == "docs/retries.md"))
    assert document["diagnostics"]["expected"] == [{"ref": "docs/retries.md", "rank": best[0]}]
    assert document["vs"]["expected"] == [{"ref": "docs/retries.md", "rank_a": best[0], "rank_b": best[1]}]


def test_an_expected_answer_the_corpus_lacks_fails_before_any_window_is_embedded(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from raglens.cli import searching

    monkeypatch.setattr(searching, "build_index", lambda *a, **kw: pytest.fail("windows were embedded"))
    with pytest.raises(SystemExit) as usage:  # argparse's own exit for a malformed value
        main(["search", str(SAMPLE_CORPUS), QUERY, *FAKE, "-q", "--expect", "x::"])
    err = capsys.readouterr().err
    assert usage.value.code == 2 and "'x::' has '::' but no symbol" in err, err
    code = main(["search", str(SAMPLE_CORPUS), QUERY, *FAKE, "-q", "--expect", "docs/nope.md"])
    err = capsys.readouterr().err
    assert code == 2 and "docs/nope.md is not an indexed file of this corpus" in err, err
