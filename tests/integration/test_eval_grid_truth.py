"""``eval --grid`` tells the truth about itself: where no configuration finds any case it marks no best
row and says so, and its time left comes from the windows still to embed, not from configurations done."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raglens.cli import eval_grid
from raglens.cli.main import main
from raglens.grid_events import GridFinished, GridRowDone, GridStarted, decode
from tests.conftest import SAMPLE_CORPUS

FAKE = ("--embedder-factory", "tests.fakes:HashingEmbedder")
PACED = ("--embedder-factory", "tests.fakes:PacedHashingEmbedder")
NOT_FOUND = (
    "no configuration found any of the golden set's 2 answerable case(s) in its top 1, so none is the best"
)


@pytest.fixture
def unfindable(tmp_path: Path) -> Path:
    """Two questions whose expected files never rank first with the fake model, and a negative."""
    path = tmp_path / "golden.jsonl"
    cases = [
        {"q": "how are failed jobs retried with backoff?", "expect": ["docs/de/schnellstart.md"]},
        {"q": "how do I schedule a nightly job?", "expect": ["tidepool/errors.py"]},
        {"q": "a recipe for banana bread", "expect": [], "kind": "negative"},
    ]
    path.write_text("".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")
    return path


def test_a_grid_that_finds_nothing_marks_no_best_and_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, unfindable: Path
) -> None:
    monkeypatch.setenv("COLUMNS", "150")
    argv = ["eval", str(SAMPLE_CORPUS), str(unfindable), *FAKE, "-q", "--no-cache", "-k", "1"]
    argv += ["--grid", "size=500,1000"]
    assert main(argv) == 0
    human = capsys.readouterr().out
    assert "◀ best" not in human and "◀" not in human
    assert NOT_FOUND in human
    assert "per question: every case is a miss in every configuration's top 1" in human

    assert main([*argv, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [(row["recall"], row["mrr"]) for row in document["grid"]] == [(0.0, 0.0), (0.0, 0.0)]
    assert document["best"] is None and document["nothing_found"] is True
    assert not any(row["best"] for row in document["grid"])
    assert document["versus_best"] == []

    assert main([*argv, "--events"]) == 0
    finished = decode(capsys.readouterr().out.splitlines()[-1])
    assert isinstance(finished, GridFinished) and NOT_FOUND in finished.report


def test_a_grid_that_finds_something_says_nothing_of_the_kind(
    capsys: pytest.CaptureFixture[str], unfindable: Path
) -> None:
    argv = ["eval", str(SAMPLE_CORPUS), str(unfindable), *FAKE, "-q", "--no-cache", "-k", "100"]
    assert main([*argv, "--grid", "size=500,1000", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["nothing_found"] is False and document["best"] is not None


def test_after_a_cached_row_the_time_left_waits_for_windows_embedded_then_follows_them(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, unfindable: Path, tmp_path: Path
) -> None:
    """The issue's grid: the first configuration all from the cache, the second embedding every window."""
    cache = ["--cache-dir", str(tmp_path / "cache")]
    argv = ["eval", str(SAMPLE_CORPUS), str(unfindable), *PACED, "-q", *cache, "-k", "1"]
    assert main([*argv, "--grid", "size=500", "--grid", "overlap=100", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["grid"][0]["embedded"] > 0
    monkeypatch.setattr(eval_grid, "UPDATE_SECONDS", 0.0, raising=False)  # none before the fix
    assert main([*argv, "--grid", "size=500,1000", "--grid", "overlap=100", "--events"]) == 0
    events = [decode(line) for line in capsys.readouterr().out.splitlines()]
    done = [event.row for event in events if isinstance(event, GridRowDone)]
    assert done[0].embedded == 0 and done[0].from_cache > 0
    assert done[1].embedded > 16, "more than one batch to embed"
    second = [event for event in events if isinstance(event, GridStarted) and event.number == 2]
    assert second[0].seconds_left is None, "nothing embedded yet: no pace to tell the time left by"
    updates = [event.seconds_left for event in second[1:] if event.seconds_left is not None]
    assert len(updates) >= 2 and len(updates) == len(second) - 1, "a time left once windows embed"
    assert all(left >= 0 for left in updates) and updates[-1] <= updates[0], updates
