"""``model=bm25`` wherever a model name goes in the headless commands, and a clear no in the explorer."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from raglens.bm25_index import identifier_tokens
from raglens.cli.main import explorer_config_from, main
from raglens.corpus import CorpusOptions, load_corpus
from raglens.errors import BadInputError
from raglens.windows import WindowParams, cut_corpus
from tests.conftest import SAMPLE_CORPUS
from tests.unit.test_bm25_index import lucene_bm25

FAKE = ("--embedder-factory", "tests.fakes:HashingEmbedder")
IDENTIFIER = "compute_backoff_delay"


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:  # type: ignore[type-arg]
    code = main([*argv, "--json", "-q", "--no-cache"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    document: dict = json.loads(captured.out)  # type: ignore[type-arg]
    return document


def test_search_with_bm25_ranks_as_lucene_bm25_and_says_its_scores_are_not_cosines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    document = run_json(capsys, "search", str(SAMPLE_CORPUS), IDENTIFIER, "--model", "bm25", "-k", "4")
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    texts = corpus.texts()
    windows = cut_corpus(corpus, WindowParams())
    expected = lucene_bm25(
        [identifier_tokens(w.text_in(texts[w.path])) for w in windows], identifier_tokens(IDENTIFIER)
    )
    order = sorted(range(len(windows)), key=lambda row: (-expected[row], row))[:4]
    assert [hit["citation"] for hit in document["hits"]] == [windows[row].citation for row in order]
    np.testing.assert_allclose(
        [hit["score"] for hit in document["hits"]], [expected[r] for r in order], rtol=1e-5
    )
    assert document["model"]["name"] == "bm25" and document["model"]["engine"] == "bm25s"
    scores = document["diagnostics"]["scores"]
    assert scores["scale"] == "bm25" and scores["histogram"] is None and scores["bins"] is None
    assert document["diagnostics"]["noise_floor"] is None
    assert all(hit["above_noise"] is None for hit in document["hits"]), "no noise floor to be above"


def test_bm25_against_a_dense_model_with_vs_and_in_the_human_output(
    capsys: pytest.CaptureFixture[str],
) -> None:
    document = run_json(capsys, "search", str(SAMPLE_CORPUS), IDENTIFIER, *FAKE, "--vs", "model=bm25")
    assert document["model"]["engine"] != "bm25s" and document["vs"]["model"]["name"] == "bm25"
    code = main(["search", str(SAMPLE_CORPUS), IDENTIFIER, "-q", "--no-cache", "--model", "bm25"])
    out = capsys.readouterr().out
    assert code == 0
    assert "bm25 · lexical scores, not cosines · bm25s" in out
    assert "BM25 scores have no fixed scale" in out and "noise floor:" not in out
    assert f"{IDENTIFIER}: " in out and "BM25 ranks 1" in out


def test_a_grid_over_a_model_and_bm25_scores_both_and_compares_their_questions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        json.dumps(
            {"q": IDENTIFIER, "expect": ["tidepool/retry.py::compute_backoff_delay"], "kind": "identifier"}
        )
        + "\n"
        + json.dumps(
            {"q": "how long to wait before running a failed job again", "expect": ["tidepool/retry.py"]}
        )
        + "\n",
        encoding="utf-8",
    )
    argv = [
        "eval",
        str(SAMPLE_CORPUS),
        str(golden),
        *FAKE,
        "-k",
        "3",
        "--grid",
        "model=all-MiniLM-L6-v2,bm25",
    ]
    document = run_json(capsys, *argv)
    models = [row["model"] for row in document["grid"]]
    assert models[1] == "bm25" and models[0] != "bm25"
    assert document["grid"][1]["unread_share"] == 0.0, "BM25 reads every token"
    assert document["cases"][0]["ranks"][1] <= 3, "BM25 finds the identifier's definition in the top 3"
    assert len(document["cases"]) == 2 and all(len(case["ranks"]) == 2 for case in document["cases"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--grid", "model=bm25", "--grid", "max_seq_length=64"], "bm25 has no max_seq_length"),
        (["--model", "bm25", "--precision", "bf16"], "bm25 has no bf16 precision"),
    ],
)
def test_a_bm25_setting_that_means_nothing_is_one_clear_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"q": "q", "expect": ["README.md"]}) + "\n", encoding="utf-8")
    code = main(["eval", str(SAMPLE_CORPUS), str(golden), "--no-cache", *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1, err


def test_the_explorer_opens_bm25_as_a_with_no_fake_model_standing_in() -> None:
    config = explorer_config_from([str(SAMPLE_CORPUS), "--model", "BM25", "--embedder-factory", "x:y"])
    assert config.retrieval.model == "bm25"
    choice = config.engine.choice(config.retrieval)
    assert (choice.model, choice.factory) == ("bm25", None), "BM25 is itself: no fake embedder replaces it"


def test_probe_says_bm25_has_no_noise_floor_to_probe_against(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["probe", str(SAMPLE_CORPUS), "--model", "bm25", "--no-cache"])
    err = capsys.readouterr().err
    assert code == 2 and "BM25 has not" in err and err.count("\n") == 1, err


def test_bm25_takes_no_token_limit_or_precision_from_a_and_a_grid_runs_no_configuration_twice(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from raglens.configuration import RetrievalConfig, grid_configs, parse_grid_axis, parse_vs

    a = RetrievalConfig(WindowParams(), None, 128, "bf16")
    assert parse_vs("model=bm25", a) == RetrievalConfig(WindowParams(), "bm25")
    with pytest.raises(BadInputError, match="bm25 has no max_seq_length"):
        parse_vs("model=bm25,max_seq_length=64", a)
    with pytest.raises(BadInputError, match="the same configuration as another"):
        grid_configs(a, [parse_grid_axis("model=bm25,BM25")])


def test_an_identifier_query_shows_each_holding_window_s_bm25_rank_beside_its_dense_rank(
    capsys: pytest.CaptureFixture[str],
) -> None:
    document = run_json(capsys, "search", str(SAMPLE_CORPUS), IDENTIFIER, *FAKE)
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    texts = corpus.texts()
    windows = cut_corpus(corpus, WindowParams())
    scores = lucene_bm25(
        [identifier_tokens(w.text_in(texts[w.path])) for w in windows], identifier_tokens(IDENTIFIER)
    )
    order = [
        row for row in sorted(range(len(windows)), key=lambda row: (-scores[row], row)) if scores[row] > 0
    ]
    bm25_rank = {windows[row].citation: rank for rank, row in enumerate(order, 1)}
    holding = document["diagnostics"]["identifier"]["windows"]
    assert holding and all(entry["bm25_rank"] == bm25_rank[entry["citation"]] for entry in holding)
    assert "; BM25 ranks " in document["diagnostics"]["identifier"]["summary"]
