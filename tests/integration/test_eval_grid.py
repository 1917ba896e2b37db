"""``eval --grid``: every row's recall@k and MRR equal an independent computation with milvus-rag's
semantics over that row's own windows; the chart, the ledger and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from raglens.cli.main import main
from raglens.corpus import CorpusOptions, load_corpus
from raglens.windows import Unit, WindowParams, cut_corpus
from tests.conftest import SAMPLE_CORPUS
from tests.fakes import HashingEmbedder

FAKE = ("--embedder-factory", "tests.fakes:HashingEmbedder")
CASES = [
    {
        "q": "how are failed jobs retried with backoff?",
        "expect": ["docs/retries.md", "tidepool/retry.py"],
        "mode": "all",
        "kind": "en",
    },
    {
        "q": "how do I schedule a nightly job?",
        "expect": ["docs/scheduling.md", "tidepool/scheduler.py"],
        "mode": "any",
        "kind": "en",
    },
    {
        "q": "where do leases expire?",
        "expect": ["docs/workers.md", "docs/storage.md", "tidepool/storage.py"],
        "mode": "all",
        "kind": "en",
    },
    {"q": "wie starte ich einen Worker?", "expect": ["docs/de/schnellstart.md"], "kind": "de"},
    {"q": "a recipe for banana bread", "expect": [], "kind": "negative"},
]


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    path = tmp_path / "golden.jsonl"
    path.write_text("".join(json.dumps(case) + "\n" for case in CASES), encoding="utf-8")
    return path


PARTIAL_SEEN: list[float] = []
"""Case recalls strictly between 0 and 1 met by the oracle: proof that partial mode-all is exercised."""


def milvus_rag(params: WindowParams, k: int) -> tuple[float, float]:
    """Recall@k and MRR written out independently: each case's windows, ranks and scoring."""
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    texts = corpus.texts()
    windows = cut_corpus(corpus, params)
    embedder = HashingEmbedder()
    vectors = embedder.encode([w.text_in(texts[w.path]) for w in windows])
    recalls, reciprocal_ranks = [], []
    for case in CASES:
        if not case["expect"]:
            continue
        scores = vectors @ embedder.encode_query(str(case["q"]))
        order = sorted(range(len(windows)), key=lambda row: (-float(scores[row]), row))
        top_paths = [windows[row].path for row in order[:k]]
        found = [path for path in case["expect"] if path in top_paths]
        recalls.append(
            len(found) / len(case["expect"]) if case.get("mode", "all") == "all" else float(bool(found))
        )
        if 0 < recalls[-1] < 1:
            PARTIAL_SEEN.append(recalls[-1])
        best = min((top_paths.index(path) + 1 for path in found), default=None)
        reciprocal_ranks.append(1 / best if best else 0.0)
    return float(np.mean(recalls)), float(np.mean(reciprocal_ranks))


def test_every_grid_row_equals_an_independent_milvus_rag_computation(
    capsys: pytest.CaptureFixture[str], golden: Path, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger"
    ledger.mkdir()
    argv = ["eval", str(SAMPLE_CORPUS), str(golden), *FAKE, "-q", "--no-cache", "-k", "5", "--json"]
    argv += ["--grid", "size=400,1000", "--grid", "overlap=0,100", "--save", str(ledger)]
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    document = json.loads(captured.out)
    rows = document["grid"]
    assert [(row["size"], row["overlap"]) for row in rows] == [(400, 0), (400, 100), (1000, 0), (1000, 100)]
    PARTIAL_SEEN.clear()
    for row in rows:
        recall, mrr = milvus_rag(WindowParams(Unit.CHARS, row["size"], row["overlap"]), 5)
        assert row["recall"] == pytest.approx(recall), row
        assert row["mrr"] == pytest.approx(mrr), row
        assert row["by_kind"]["negative"]["mrr"] is None
        assert row["embedded"] + row["from_cache"] > 0
    assert PARTIAL_SEEN, "some mode-all case found only part of its refs"
    best = max(rows, key=lambda row: (row["recall"], row["mrr"]))
    assert [row["best"] for row in rows].count(True) == 1 and best["best"]
    saved = sorted(ledger.glob("raglens-eval-*.json"))
    assert len(saved) == 4
    assert {json.loads(path.read_text())["parameters"]["size"] for path in saved} == {400, 1000}


def test_the_human_grid_has_a_table_a_best_row_and_a_chart_and_plot_draws_an_svg(
    capsys: pytest.CaptureFixture[str], golden: Path, tmp_path: Path
) -> None:
    plot = tmp_path / "grid.svg"
    argv = ["eval", str(SAMPLE_CORPUS), str(golden), *FAKE, "-q", "--no-cache", "--grid", "size=500,1000"]
    code = main([*argv, "--plot", str(plot)])
    out = capsys.readouterr().out
    assert code == 0
    assert "◀ best" in out and "recall@8 (filled) and MRR (hollow) against size" in out
    assert plot.read_text(encoding="utf-8").lstrip().startswith("<?xml") and "<svg" in plot.read_text(
        encoding="utf-8"
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--grid", "size=400,x"], "size must be a whole number"),
        (["--grid", "size=100", "--grid", "overlap=100"], "smaller"),
        (["--grid", "colour=1"], "expected KEY=V1,V2"),
        (["--grid", "size=500", "--plot", "chart.pdf"], ".svg or .png"),
    ],
)
def test_a_bad_grid_or_plot_fails_before_anything_loads(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    golden: Path,
    extra: list[str],
    message: str,
) -> None:
    from raglens.cli import eval_grid, searching

    for module in (searching, eval_grid):
        monkeypatch.setattr(module, "prepare_index", lambda *a: pytest.fail("the corpus was indexed"))
    code = main(["eval", str(SAMPLE_CORPUS), str(golden), *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err, err
