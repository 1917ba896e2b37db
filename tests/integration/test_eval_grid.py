"""``eval --grid``: every row's recall@k and MRR equal an independent computation with milvus-rag's
semantics over that row's own windows; the chart, the ledger and bad input; the JSON lines of
``--events`` the explorer reads from its child, and how that child's failures reach it."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

from raglens.cli.main import explorer_config_from, main
from raglens.configuration import RetrievalConfig, grid_configs, parse_grid_axis
from raglens.corpus import CorpusOptions, load_corpus
from raglens.grid_events import GridFailed, GridFinished, GridRowDone, GridStarted, decode, encode
from raglens.ui.grid_run import GridChild, grid_command
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


def case_standings(params: WindowParams, k: int) -> list[tuple[int | None, float, float]]:
    """Each answerable case's best rank over the whole ranking, recall and reciprocal rank, written
    out independently of raglens's evaluation."""
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    texts = corpus.texts()
    windows = cut_corpus(corpus, params)
    embedder = HashingEmbedder()
    vectors = embedder.encode([w.text_in(texts[w.path]) for w in windows])
    standings = []
    for case in CASES:
        if not case["expect"]:
            continue
        scores = vectors @ embedder.encode_query(str(case["q"]))
        order = sorted(range(len(windows)), key=lambda row: (-float(scores[row]), row))
        paths = [windows[row].path for row in order]
        ranks = [paths.index(path) + 1 for path in case["expect"] if path in paths]
        found = [rank for rank in ranks if rank <= k]
        recall = len(found) / len(case["expect"]) if case.get("mode", "all") == "all" else float(bool(found))
        standings.append((min(ranks, default=None), recall, 1 / min(found) if found else 0.0))
    return standings


def test_the_grid_tells_each_question_s_rank_in_every_row_and_what_each_row_gains_or_loses(
    capsys: pytest.CaptureFixture[str], golden: Path
) -> None:
    argv = ["eval", str(SAMPLE_CORPUS), str(golden), *FAKE, "-q", "--no-cache", "-k", "3", "--json"]
    code = main([*argv, "--grid", "size=200,400,1000", "--grid", "overlap=0"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    document = json.loads(captured.out)
    rows, cases = document["grid"], document["cases"]
    standings = [case_standings(WindowParams(Unit.CHARS, row["size"], 0), 3) for row in rows]
    best = document["best"]
    assert rows[best]["best"] and document["negatives_not_compared"] == 1
    assert [case["line"] for case in cases] == [1, 2, 3, 4], "the negative on line 5 has no rank"
    moved = 0
    for number, case in enumerate(cases):
        assert case["ranks"] == [standing[number][0] for standing in standings]
        for row, change in enumerate(case["change"]):
            mine, theirs = standings[row][number][1:], standings[best][number][1:]
            expected = (
                None if row == best else "gained" if mine > theirs else "lost" if mine < theirs else "same"
            )
            assert change == expected, (case, row)
            moved += change in ("gained", "lost")
    assert moved, "some question changes between the rows, so the comparison is exercised"
    for tally in document["versus_best"]:
        row = tally["row"]
        assert tally["gained"] == [case["line"] for case in cases if case["change"][row] == "gained"]
        assert tally["lost"] == [case["line"] for case in cases if case["change"][row] == "lost"]
        assert tally["same"] == len(cases) - len(tally["gained"]) - len(tally["lost"])


def test_the_human_grid_has_a_table_a_best_row_and_a_chart_and_plot_draws_an_svg(
    capsys: pytest.CaptureFixture[str], golden: Path, tmp_path: Path
) -> None:
    plot = tmp_path / "grid.svg"
    argv = ["eval", str(SAMPLE_CORPUS), str(golden), *FAKE, "-q", "--no-cache", "--grid", "size=500,1000"]
    code = main([*argv, "--plot", str(plot)])
    out = capsys.readouterr().out
    assert code == 0
    assert "◀ best" in out and "recall@8 (filled) and MRR (hollow) against size" in out
    assert "per question, against the best" in out and "#1" in out and "#2" in out
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


WIDTH = 100
"""The report's width, as the explorer passes it to its child."""


def grid_child_command(golden: Path, factory: str, *axes: str) -> list[str]:
    """The command line the explorer's ``x`` key runs, on the sample corpus with a fake model."""
    config = explorer_config_from([str(SAMPLE_CORPUS), "--embedder-factory", factory, "--no-cache"])
    return grid_command(config, config.retrieval, str(golden), [parse_grid_axis(axis) for axis in axes], 5)


def test_the_child_sends_each_configuration_started_and_scored_then_the_human_report(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, golden: Path
) -> None:
    command = grid_child_command(golden, "tests.fakes:HashingEmbedder", "size=500,1000", "overlap=0,100")
    assert "--events" in command
    events = list(GridChild(command, WIDTH).events())
    assert [type(event) for event in events] == [GridStarted, GridRowDone] * 4 + [GridFinished]
    started = [event for event in events if isinstance(event, GridStarted)]
    scored = [event for event in events if isinstance(event, GridRowDone)]
    configs = grid_configs(
        RetrievalConfig(WindowParams()), [parse_grid_axis("size=500,1000"), parse_grid_axis("overlap=0,100")]
    )
    assert [(event.number, event.total, event.config) for event in started] == [
        (number, 4, config.describe()) for number, config in enumerate(configs, 1)
    ]
    assert started[0].seconds_left is None
    # A time left needs a pace measured at every size still to come (1000-character windows take
    # longer than 500's): until a 1000 row has embedded, nothing is said; the last row knows.
    lefts = [event.seconds_left for event in started]
    assert lefts[:3] == [None, None, None] and isinstance(lefts[3], int) and lefts[3] >= 0, lefts
    assert [(event.number, event.total, event.row.config) for event in scored] == [
        (event.number, event.total, event.config) for event in started
    ]

    # The same grid through the CLI in this process, as --json and as the human table, at the same width.
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    arguments = [argument for argument in command[3:] if argument != "--events"]
    assert main([*arguments, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    for event, expected in zip(scored, document["grid"], strict=True):
        row = event.row
        figures = {
            name: dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value
            for name in expected
            if name not in ("by_kind", "best")
            for value in [getattr(row, name)]
        }
        assert figures == {name: value for name, value in expected.items() if name in figures}
        assert {
            kind.kind: {
                "recall": kind.recall,
                "mrr": kind.mrr,
                "ndcg": kind.ndcg,
                "abstain_rate": kind.abstain_rate,
            }
            for kind in row.kinds
        } == expected["by_kind"]
    assert main(arguments) == 0
    human = capsys.readouterr().out
    assert "◀ best" in human
    finished = events[-1]
    assert isinstance(finished, GridFinished) and finished.report == human
    answerable = [case for case in CASES if case["expect"]]
    assert [case.query for case in finished.cases] == [case["q"] for case in answerable]
    assert [list(case.expect) for case in finished.cases] == [case["expect"] for case in answerable]
    assert all(len(case.cells) == 4 for case in finished.cases), "a rank for each of the 4 rows"
    for case in finished.cases:
        assert all(cell.split()[0] in human for cell in case.cells)


def test_a_child_killed_mid_grid_ends_with_a_failure_naming_the_signal(golden: Path) -> None:
    command = grid_child_command(golden, "tests.fakes:PacedHashingEmbedder", "size=300,400,500,600")
    child = GridChild(command, WIDTH)
    events = child.events()
    first = next(events)
    assert first == GridStarted(1, 4, first.config, None)
    os.kill(child.pid, signal.SIGKILL)
    rest = list(events)
    assert rest, "the stream ends with a failure"
    assert all(isinstance(event, GridStarted | GridRowDone) for event in rest[:-1])
    last = rest[-1]
    assert isinstance(last, GridFailed) and "killed by SIGKILL" in last.message, last


def test_a_child_that_exits_without_a_last_event_fails_with_its_code_and_complaints(tmp_path: Path) -> None:
    script = tmp_path / "grid.py"
    script.write_text(
        "import sys\n"
        f"print({encode(GridStarted(1, 2, 'c', None))!r})\n"
        "print('-> narration is not a complaint', file=sys.stderr)\n"
        "print('Traceback: something broke', file=sys.stderr)\n"
        "sys.exit(7)\n",
        encoding="utf-8",
    )
    events = list(GridChild([sys.executable, str(script)], WIDTH).events())
    assert events == [
        GridStarted(1, 2, "c", None),
        GridFailed("the grid's process ended (exit code 7) without its report; Traceback: something broke"),
    ]


def test_a_child_that_prints_something_else_is_stopped_and_the_line_reported(tmp_path: Path) -> None:
    script = tmp_path / "grid.py"
    script.write_text("import time\nprint('loading weights...', flush=True)\ntime.sleep(3600)\n")
    child = GridChild([sys.executable, str(script)], WIDTH)
    events = list(child.events())
    assert len(events) == 1 and isinstance(events[0], GridFailed)
    assert "not an eval grid event" in events[0].message and "loading weights" in events[0].message
    assert child.has_ended(), "the child was ended"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--grid", "size=500", "--embedder-factory", "tests.fakes:failing_embedder"], "cannot be loaded"),
        (["--grid", "size=400,x", *FAKE], "size must be a whole number"),
        (["--grid", "size=500", "--floor", "nan", *FAKE], "--floor must be a number"),
    ],
)
def test_with_events_a_failure_is_a_failed_line_and_the_same_exit_code(
    capsys: pytest.CaptureFixture[str], golden: Path, extra: list[str], message: str
) -> None:
    argv = ["eval", str(SAMPLE_CORPUS), str(golden), "--no-cache", *extra]
    code = main(argv)
    plain = capsys.readouterr()
    assert code != 0 and plain.out == "" and message in plain.err
    assert main([*argv, "--events"]) == code
    captured = capsys.readouterr()
    events = [decode(line) for line in captured.out.splitlines()]
    assert events and all(isinstance(event, GridStarted | GridRowDone) for event in events[:-1])
    last = events[-1]
    assert isinstance(last, GridFailed) and message in last.message
    assert captured.err.endswith(f"raglens: {last.message}\n")


@pytest.mark.parametrize(
    ("extra", "message"),
    [([], "add --grid"), (["--grid", "size=500", "--json"], "choose one")],
)
def test_events_need_a_grid_and_no_json(
    capsys: pytest.CaptureFixture[str], golden: Path, extra: list[str], message: str
) -> None:
    code = main(["eval", str(SAMPLE_CORPUS), str(golden), *FAKE, "--events", *extra])
    out = capsys.readouterr().out
    assert code == 2
    event = decode(out)
    assert isinstance(event, GridFailed) and message in event.message


def test_the_per_question_table_fits_80_columns_with_six_configurations(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, golden: Path
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    argv = ["eval", str(SAMPLE_CORPUS), str(golden), *FAKE, "-q", "--no-cache", "-k", "2"]
    assert main([*argv, "--grid", "size=300,500,1000", "--grid", "model=all-MiniLM-L6-v2,bm25"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("line  question"))
    table = lines[start : start + 1 + len([case for case in CASES if case["expect"]])]
    assert all(len(line) <= 80 for line in table), table
    assert all(len(line.split()) >= 2 + 6 for line in table[1:]), "a line, some question and six ranks"
    assert not any("miss…" in line or "…▼" in line for line in table), "no rank cell is cut"
