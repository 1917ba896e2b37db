"""Why a score, on the real bundled model: the export's token shares against sentence-transformers'."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from raglens.attribution import Explanation, Unexplained, explain_with, share_of_phrase
from raglens.corpus import CorpusOptions, load_corpus
from raglens.embedding import SentenceTransformerEmbedder, default_model_path
from raglens.fingerprint import ModelFingerprint
from raglens.onnx_model import OnnxEmbedder, export_path
from raglens.windows import WindowParams, cut_corpus, window_texts
from tests.conftest import REPO_ROOT, SAMPLE_CORPUS, copy_export

pytestmark = pytest.mark.model

QUESTIONS = [
    "what happens after a job is acknowledged?",
    "drain_pending_jobs",
    "Wie starte ich einen Worker?",
    "have you ever been to a five-star resort?",
]


def sample_texts() -> list[str]:
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    return window_texts(corpus, cut_corpus(corpus, WindowParams()))


def independent_window_shares(model: SentenceTransformerEmbedder, question: str, text: str) -> np.ndarray:
    """Each window token's share q·h_i / (n ‖m‖), from sentence-transformers' own token vectors."""
    (states,) = model._model.encode([text], output_value="token_embeddings")
    h = states.float().cpu().numpy().astype(np.float64)
    q = model.encode_query(question).astype(np.float64)
    shares: np.ndarray = (h @ q) / (len(h) * np.linalg.norm(h.mean(axis=0)))
    return shares


def test_the_exports_token_shares_are_sentence_transformers_own_and_add_up_to_the_score(
    exported: tuple[Path, ModelFingerprint], real_embedder: SentenceTransformerEmbedder
) -> None:
    cache_dir, fingerprint = exported
    onnx = OnnxEmbedder(export_path(cache_dir, fingerprint), fingerprint)
    texts = sample_texts()
    chosen = [texts[0], texts[len(texts) // 2], max(texts, key=len), "a", "x" * 3000]
    vectors = onnx.encode(chosen)
    for question in QUESTIONS:
        query = onnx.encode_query(question)
        for text, vector in zip(chosen, vectors, strict=True):
            explanation = explain_with(onnx, question, text)
            assert isinstance(explanation, Explanation), explanation
            shown = float(query @ vector)
            assert abs(explanation.residual(shown)) <= 1e-5, (question, text[:40])
            onnx_shares = np.array([share.contribution for share in explanation.window_tokens])
            reference = independent_window_shares(real_embedder, question, text)
            assert onnx_shares.shape == reference.shape, (
                "one share per token the model pools, [CLS] and [SEP] too"
            )
            assert np.abs(onnx_shares - reference).max() <= 1e-5
            assert sum(share.contribution for share in explanation.query_tokens) == pytest.approx(
                explanation.total, abs=1e-9
            )
            for share in explanation.window_tokens:
                if share.start is not None and share.end is not None and share.token != "[UNK]":
                    piece = share.token.removeprefix("##")
                    assert text[share.start : share.end].lower() == piece, "offsets point into the window"


def test_sentence_transformers_gives_the_same_shares(
    exported: tuple[Path, ModelFingerprint], real_embedder: SentenceTransformerEmbedder
) -> None:
    cache_dir, fingerprint = exported
    onnx = OnnxEmbedder(export_path(cache_dir, fingerprint), fingerprint)
    text = sample_texts()[3]
    question = QUESTIONS[0]
    by_torch, by_onnx = explain_with(real_embedder, question, text), explain_with(onnx, question, text)
    assert isinstance(by_torch, Explanation) and isinstance(by_onnx, Explanation)
    assert [s.token for s in by_torch.window_tokens] == [s.token for s in by_onnx.window_tokens]
    assert [s.token for s in by_torch.query_tokens] == [s.token for s in by_onnx.query_tokens]
    torch_shares = np.array([s.contribution for s in by_torch.window_tokens])
    onnx_shares = np.array([s.contribution for s in by_onnx.window_tokens])
    assert np.abs(torch_shares - onnx_shares).max() <= 1e-5
    shown = float(real_embedder.encode_query(question) @ real_embedder.encode([text])[0])
    assert abs(by_torch.residual(shown)) <= 1e-5


@pytest.fixture(scope="module")
def cls_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled model's files with its pooling set to CLS: a model whose score has no exact sum."""
    folder = tmp_path_factory.mktemp("cls-model") / "minilm-cls"
    shutil.copytree(default_model_path(), folder)
    config = folder / "1_Pooling" / "config.json"
    pooling = json.loads(config.read_text())
    pooling.update(pooling_mode_cls_token=True, pooling_mode_mean_tokens=False)
    config.write_text(json.dumps(pooling))
    return folder


def test_cls_pooling_is_refused_in_one_line_by_both_engines(
    cls_model: Path, exported: tuple[Path, ModelFingerprint]
) -> None:
    model = SentenceTransformerEmbedder(str(cls_model), device="cpu")
    answer = explain_with(model, "what is a queue?", "A queue is a name.")
    assert isinstance(answer, Unexplained)
    assert answer.reason.startswith("no exact attribution for cls pooling")
    cache_dir, fingerprint = exported
    onnx = OnnxEmbedder(export_path(cache_dir, fingerprint), replace(fingerprint, folder=cls_model))
    answer = explain_with(onnx, "what is a queue?", "A queue is a name.")
    assert isinstance(answer, Unexplained) and answer.reason.startswith(
        "no exact attribution for cls pooling"
    )


def test_search_explain_json_gives_every_hit_its_token_shares(
    exported: tuple[Path, ModelFingerprint], tmp_path: Path
) -> None:
    copy_export(exported, tmp_path)
    question = QUESTIONS[0]
    command = [sys.executable, "-m", "raglens", "search", str(SAMPLE_CORPUS), question, "--explain", "--json"]
    command += ["-q", "--cache-dir", str(tmp_path)]
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    run = subprocess.run(command, capture_output=True, text=True, env=environment, check=False, timeout=300)
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    texts = load_corpus(SAMPLE_CORPUS, CorpusOptions()).texts()
    for hit in document["hits"]:
        explanation = hit["explanation"]
        assert explanation["method"] == "exact: mean pooling"
        assert abs(explanation["residual"]) <= 1e-5
        assert sum(t["contribution"] for t in explanation["window_tokens"]) == pytest.approx(
            hit["score"], abs=1e-5
        )
        assert sum(t["contribution"] for t in explanation["query_tokens"]) == pytest.approx(
            hit["score"], abs=1e-5
        )
        window_text = texts[hit["path"]][hit["start"] : hit["end"]]
        pieces = [t for t in explanation["window_tokens"] if t["start"] is not None]
        assert all(
            window_text[t["start"] : t["end"]].lower() == t["token"].removeprefix("##") for t in pieces
        )
        assert explanation["window_tokens"][0]["token"] == "[CLS]"
        assert sum(explanation["by_kind"].values()) == pytest.approx(explanation["shares_sum"], abs=1e-9)


def test_a_quoted_phrase_carries_its_own_share(
    exported: tuple[Path, ModelFingerprint],
) -> None:
    cache_dir, fingerprint = exported
    onnx = OnnxEmbedder(export_path(cache_dir, fingerprint), fingerprint)
    text = "def drain_pending_jobs(queue):\n    '''Run every job left in the queue.'''\n"
    explanation = explain_with(onnx, "drain_pending_jobs", text)
    assert isinstance(explanation, Explanation)
    quoted = share_of_phrase(explanation, text, "drain_pending_jobs")
    assert 0 < quoted < explanation.total
    in_span = [s for s in explanation.window_tokens if s.start is not None and s.start < 22 and s.start >= 4]
    assert quoted == pytest.approx(sum(s.contribution for s in in_span))


def test_probe_says_what_share_of_the_top_hit_the_quoted_name_carries(
    exported: tuple[Path, ModelFingerprint], tmp_path: Path
) -> None:
    copy_export(exported, tmp_path)
    command = [sys.executable, "-m", "raglens", "probe", str(SAMPLE_CORPUS), "--json", "-q"]
    command += ["--cache-dir", str(tmp_path)]
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    run = subprocess.run(command, capture_output=True, text=True, env=environment, check=False, timeout=300)
    assert run.returncode == 0, run.stderr
    (symbol,) = [probe for probe in json.loads(run.stdout)["probes"] if probe["probe"] == "exact symbol"]
    said = " ".join(symbol["explanation"])
    assert "the quoted words 'drain_pending_jobs' carry +0.0" in said, said
