"""The diagnostics lab end to end on sample_corpus: probes, golden-set eval, coverage, the prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raglens.cli.main import main
from raglens.diagnostics.coverage import token_counter_for
from raglens.embedding import SentenceTransformerEmbedder
from raglens.engine import Engines
from tests.conftest import REPO_ROOT, SAMPLE_CORPUS, MakeTree

GOLDEN = REPO_ROOT / "golden" / "sample_corpus.jsonl"


@pytest.fixture
def real_model_in_cli(monkeypatch: pytest.MonkeyPatch, real_embedder: SentenceTransformerEmbedder) -> None:
    """The CLI opens the session's one loaded model instead of loading it again."""
    monkeypatch.setattr(Engines, "_open_model", lambda engines: real_embedder)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:  # type: ignore[type-arg]
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    document: dict = json.loads(captured.out)  # type: ignore[type-arg]
    return document


@pytest.mark.model
@pytest.mark.usefixtures("real_model_in_cli")
def test_search_and_probe_judge_with_one_noise_band(capsys: pytest.CaptureFixture[str]) -> None:
    """One definition of the band everywhere; an off-topic question is never "above" it, nor a
    straddle; a question in a language the model does not read gets no verdict, and is told why."""
    pizza = run_json(capsys, "search", str(SAMPLE_CORPUS), "What is the best pizza in Naples?", "-q")
    band = pizza["diagnostics"]["noise_floor"]
    assert len(band["controls"]) == 32 and band["percentile"] == 95
    assert [hit["noise"] for hit in pizza["hits"]] != [] and "above" not in [
        h["noise"] for h in pizza["hits"]
    ]
    assert pizza["diagnostics"]["straddles"] == []
    probe = run_json(capsys, "probe", str(SAMPLE_CORPUS), "-q")
    (unanswerable,) = [p for p in probe["probes"] if p["probe"] == "unanswerable"]
    said = f"noise edge {band['edge']:.3f} ± {band['spread']:.3f}"
    assert any(said in line for line in unanswerable["explanation"]), (said, unanswerable["explanation"])
    german = run_json(capsys, "search", str(SAMPLE_CORPUS), "wie starte ich einen Worker?", "-q")
    assert german["diagnostics"]["language"]["code"] == "de"
    assert german["diagnostics"]["language"]["model_reads_it"] is False
    assert all(hit["noise"] is None and hit["above_noise"] is None for hit in german["hits"])
    assert main(["search", str(SAMPLE_CORPUS), "wie starte ich einen Worker?", "-q"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "the question reads as German; the model reads English only" in printed
    assert "no noise verdict" in printed and "likely unanswerable" not in printed
    assert "· reads English only ·" in printed, "the header says what the model reads, for every question"


@pytest.mark.model
@pytest.mark.usefixtures("real_model_in_cli")
def test_probe_finds_the_symbol_cut_spans_and_unanswerable_hits(capsys: pytest.CaptureFixture[str]) -> None:
    document = run_json(capsys, "probe", str(SAMPLE_CORPUS), "-q", "--probe", "how is a job retried?")
    probes = {probe["probe"]: probe for probe in document["probes"]}
    assert list(probes) == [
        "exact symbol",
        "boundary straddle",
        "other language",
        "unanswerable",
        "your probe",
    ]
    symbol = probes["exact symbol"]
    # The identifier is chosen from the corpus: defined once in code, mentioned in the most other files.
    assert symbol["queries"] == ["drain_pending_jobs"]
    assert "defined once at tidepool/queue.py:L81-L95" in symbol["explanation"][0]
    assert "; BM25 ranks 1" in symbol["explanation"][3], "BM25's ranks of its windows beside the model's"
    definition_window = symbol["watched"][0]
    assert definition_window["citation"].startswith("tidepool/queue.py:")
    assert isinstance(definition_window["rank"], int) and definition_window["rank"] >= 1
    straddle = probes["boundary straddle"]
    assert len(straddle["watched"]) >= 2  # both halves scored
    assert all(isinstance(half["score"], float) for half in straddle["watched"])
    language = probes["other language"]
    assert len(language["queries"]) == 4
    assert "reads English only (from model card)" in language["warning"]
    unanswerable = probes["unanswerable"]
    assert len(unanswerable["top_scores"]) == 3
    assert all(f"{document['k']} hits anyway" in line for line in unanswerable["explanation"][:3])
    assert probes["your probe"]["queries"] == ["how is a job retried?"]


@pytest.mark.model
@pytest.mark.usefixtures("real_model_in_cli")
def test_eval_reports_recall_mrr_kinds_calibration_and_saves_a_ledger_row(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    document = run_json(
        capsys, "eval", str(SAMPLE_CORPUS), str(GOLDEN), "-q", "--floor", "0.25", "--save", str(tmp_path)
    )
    assert document["k"] == 8
    assert document["cases"] == 11 and document["positives"] == 8
    rows = {row["query"]: row for row in document["results"]}
    drain = rows["drain_pending_jobs"]
    assert drain["found"] and drain["rank"] == drain["ref_ranks"][0]
    assert len(drain["hits"]) == 8
    assert {kind["kind"] for kind in document["kinds"]} == {"symbol", "prose-en", "prose-de", "unanswerable"}
    assert 0 < document["recall_at_k"] <= 1 and 0 < document["mrr"] <= 1
    negatives = [row for row in document["results"] if row["kind"] == "unanswerable"]
    calibration = document["calibration"]
    assert calibration["highest_negative_top"] == max(row["top_score"] for row in negatives)
    found_tops = [row["top_score"] for row in document["results"] if row["found"]]
    assert calibration["lowest_found_top"] == min(found_tops)
    assert document["abstention"]["floor"] == 0.25
    assert document["abstention"]["abstained"] == sum(row["top_score"] < 0.25 for row in negatives)
    (saved,) = tmp_path.glob("raglens-eval-*.json")
    ledger = json.loads(saved.read_text(encoding="utf-8"))
    assert ledger["model"]["name"] == "all-MiniLM-L6-v2" and ledger["parameters"]["size"] == 1000
    assert ledger["recall_at_k"] == document["recall_at_k"]

    # milvus-rag's semantics, worked out again from each case's ref ranks.
    k = document["k"]
    positives = [row for row in document["results"] if row["expect"]]
    recalls, reciprocal_ranks = [], []
    for row in positives:
        within = [rank for rank in row["ref_ranks"] if rank is not None and rank <= k]
        recalls.append(len(within) / len(row["ref_ranks"]) if row["mode"] == "all" else float(bool(within)))
        reciprocal_ranks.append(1 / min(within) if within else 0.0)
    assert document["recall_at_k"] == pytest.approx(sum(recalls) / len(recalls))
    assert document["mrr"] == pytest.approx(sum(reciprocal_ranks) / len(reciprocal_ranks))
    lease = rows["what happens when a worker loses its lease?"]
    assert lease["mode"] == "all" and lease["recall"] in (0.0, 0.5, 1.0)
    (negative_kind,) = [kind for kind in document["kinds"] if kind["kind"] == "unanswerable"]
    assert negative_kind["mrr"] is None and negative_kind["recall_at_k"] is None
    assert negative_kind["abstain_rate"] == sum(row["top_score"] < 0.25 for row in negatives) / len(negatives)


def test_a_bad_golden_line_fails_before_any_model_loads(
    capsys: pytest.CaptureFixture[str], make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    from raglens.cli import evaluating  # imported here, so the patch below is not bound into it for good

    monkeypatch.setattr(evaluating, "prepare_index", lambda *a: pytest.fail("the corpus was indexed"))
    root = make_tree({"a.md": "alpha\n", "golden.jsonl": '{"q": "a", "expect": ["a.md"]}\n{"q": 3}\n'})
    code = main(["eval", str(root), str(root / "golden.jsonl")])
    err = capsys.readouterr().err
    assert code == 2
    assert "golden.jsonl: line 2: " in err and "Traceback" not in err


@pytest.mark.model
@pytest.mark.usefixtures("real_model_in_cli")
def test_eval_names_expected_refs_the_corpus_does_not_have(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"q": "x", "expect": ["tidepool/queue.py::no_such_thing"]}\n', encoding="utf-8")
    code = main(["eval", str(SAMPLE_CORPUS), str(golden), "-q"])
    assert code == 2
    assert "line 1: no definition of no_such_thing found in tidepool/queue.py" in capsys.readouterr().err


def test_files_json_reports_what_no_embedding_reads(capsys: pytest.CaptureFixture[str]) -> None:
    document = run_json(capsys, "files", str(SAMPLE_CORPUS))
    coverage = document["coverage"]
    assert coverage["token_limit"] == 254  # 256 tokens less [CLS] and [SEP]
    assert 0 < coverage["truncated_windows"] < coverage["window_count"]
    assert coverage["unread_characters"] == sum(f["coverage"]["unread_characters"] for f in document["files"])
    assert 0 < coverage["unread_share"] < 0.2
    assert isinstance(coverage["suggested_window_chars"], int) and coverage["suggested_window_chars"] < 1000
    for entry in document["files"]:
        for start, end in entry["coverage"]["unread_spans"]:
            assert 0 <= start < end <= entry["characters"]


@pytest.mark.model
@pytest.mark.usefixtures("real_model_in_cli")
def test_search_shows_the_prompt_and_the_identifier_view(capsys: pytest.CaptureFixture[str]) -> None:
    document = run_json(capsys, "search", str(SAMPLE_CORPUS), "drain_pending_jobs", "-q", "--prompt")
    prompt = document["prompt"]
    for position, hit in enumerate(document["hits"], start=1):
        assert f"[{position}] {hit['citation']}\n" in prompt["text"]
    assert prompt["text"].rstrip().endswith("Question: drain_pending_jobs\nAnswer:")
    counter = token_counter_for(None)
    assert counter is not None and prompt["token_count"] == counter.count(prompt["text"])
    diagnostics = document["diagnostics"]
    identifier = diagnostics["identifier"]
    assert {"path": "tidepool/queue.py", "line": 81} in identifier["occurrences"]
    assert all(isinstance(w["rank"], int) for w in identifier["windows"])
    assert sum(diagnostics["scores"]["histogram"]) == document["corpus"]["window_count"]
    assert diagnostics["noise_floor"]["high"] < document["hits"][0]["score"]
    assert any(hit["lexical"]["identifiers"] == ["drain_pending_jobs"] for hit in document["hits"])
