"""SIGTERM and Ctrl+C during indexing: a prompt, clean exit, a consistent cache, and a resumable run."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from raglens.vector_cache import CACHE_FILE_NAME, VectorCache
from tests.conftest import REPO_ROOT, wait_for_cached_vectors

FAKE = "tests.fakes:PacedHashingEmbedder"
"""150 ms a batch: the run lasts seconds, long enough to be interrupted part-way."""


def make_corpus(root: Path, files: int = 120) -> Path:
    root.mkdir()
    for number in range(files):
        (root / f"note{number:03}.txt").write_text(f"note {number} says " * 120, encoding="utf-8")
    return root


def start_search(corpus: Path, cache: Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "raglens", "search", str(corpus), "what do the notes say?"]
    command += ["--embedder-factory", FAKE, "--cache-dir", str(cache), "--json"]
    return subprocess.Popen(
        command,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize(
    ("sent", "code", "said"), [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")]
)
def test_a_signal_mid_index_exits_promptly_and_the_next_run_resumes(
    tmp_path: Path, sent: signal.Signals, code: int, said: str
) -> None:
    corpus, cache = make_corpus(tmp_path / "corpus"), tmp_path / "cache"
    search = start_search(corpus, cache)
    try:
        wait_for_cached_vectors(search, cache, at_least=32)
        search.send_signal(sent)
        _, err = search.communicate(timeout=30)  # a bound for a stuck process, not a speed target
    finally:
        search.kill()
    assert search.returncode == code
    assert f"raglens: {said}" in err and "Traceback" not in err
    with sqlite3.connect(cache / CACHE_FILE_NAME) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with VectorCache.open(cache) as peek:
        kept = peek.info().entries
    resumed = start_search(corpus, cache)
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    document = json.loads(out)
    assert document["cache"]["from_cache"] == kept > 0
    assert document["cache"]["embedded"] == document["corpus"]["window_count"] - kept
    assert document["cache"]["embedded"] > 0, (
        "the signal stopped the search before it had embedded everything"
    )
