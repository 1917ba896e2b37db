"""A damaged cache, damaged rows and two writers at once, as a careless or hostile user meets them.

Every test runs raglens itself (real SQLite, real processes) against a cache damaged the way issue 28
found it; each failed before the fix.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from raglens.embedding import normalize_rows
from raglens.embedding_events import ReadingExtent
from raglens.fingerprint import ModelFingerprint
from raglens.stored_index import INDEX_FOLDER
from raglens.vector_cache import CACHE_FILE_NAME, ModelCache, VectorCache
from tests.conftest import REPO_ROOT, SAMPLE_CORPUS

FAKE = ["--embedder-factory", "tests.fakes:HashingEmbedder"]
QUESTION = "how are failed jobs retried?"


def search(cache_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``raglens search sample_corpus QUESTION --json`` with the fake model, on ``cache_dir``."""
    command = [sys.executable, "-m", "raglens", "search", str(SAMPLE_CORPUS), QUESTION, "--json", *FAKE]
    command += ["--cache-dir", str(cache_dir), *extra]
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run(
        command, cwd=REPO_ROOT, capture_output=True, text=True, env=environment, timeout=180, check=False
    )


def cache_use(run: subprocess.CompletedProcess[str]) -> dict[str, int]:
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    document = json.loads(run.stdout)
    return {"from_cache": document["cache"]["from_cache"], "embedded": document["cache"]["embedded"]}


def warnings_of(run: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in run.stderr.splitlines() if line.startswith("raglens: warning:")]


def forget_stored_indexes(cache_dir: Path) -> None:
    """Delete the complete indexes a search stores (``stored_index``): with one for the unchanged
    sample corpus in place, a search takes it whole and reads no row of the SQLite cache at all."""
    shutil.rmtree(cache_dir / INDEX_FOLDER, ignore_errors=True)


def test_damaged_rows_are_said_and_replaced_not_embedded_again_on_every_run(tmp_path: Path) -> None:
    """Every stored vector set to NaN: three runs said "0 of 66 from the cache" and embedded all 66."""
    assert cache_use(search(tmp_path)) == {"from_cache": 0, "embedded": 66}
    nan = np.full(64, np.nan, dtype="<f4").tobytes()
    with sqlite3.connect(tmp_path / CACHE_FILE_NAME) as connection:
        connection.execute("UPDATE vectors SET vector = ?", (nan,))
    taken = search(tmp_path)  # the sample corpus's files are long settled: its index was stored
    assert "from the index kept" in taken.stderr, "the stored index, sound, read no damaged row"
    assert cache_use(taken) == {"from_cache": 66, "embedded": 0} and warnings_of(taken) == []
    forget_stored_indexes(tmp_path)
    first = search(tmp_path)
    assert cache_use(first) == {"from_cache": 0, "embedded": 66}
    (warning,) = warnings_of(first)
    assert "66 stored vector(s)" in warning and "damaged" in warning and "replaced" in warning
    forget_stored_indexes(tmp_path)
    second = search(tmp_path)
    assert cache_use(second) == {"from_cache": 66, "embedded": 0}, "the damaged rows were replaced"
    assert warnings_of(second) == []


def test_a_model_table_that_gives_the_wrong_dimension_is_corrected_in_one_line(tmp_path: Path) -> None:
    """``update models set dimension=10`` failed every run with a ValueError traceback."""
    assert cache_use(search(tmp_path)) == {"from_cache": 0, "embedded": 66}
    with sqlite3.connect(tmp_path / CACHE_FILE_NAME) as connection:
        connection.execute("UPDATE models SET dimension = 10")
    damaged = search(tmp_path)
    assert cache_use(damaged) == {"from_cache": 66, "embedded": 0}, "the vectors themselves were sound"
    (warning,) = warnings_of(damaged)
    assert "gave tests.fakes:HashingEmbedder 10 dimensions where its vectors have 64; corrected" in warning
    with sqlite3.connect(tmp_path / CACHE_FILE_NAME) as connection:
        assert connection.execute("SELECT dimension FROM models").fetchall() == [(64,)]
    assert warnings_of(search(tmp_path)) == []


def test_a_wrong_dimension_with_no_vector_to_tell_is_corrected_when_the_engine_stores(tmp_path: Path) -> None:
    assert cache_use(search(tmp_path)) == {"from_cache": 0, "embedded": 66}
    with sqlite3.connect(tmp_path / CACHE_FILE_NAME) as connection:
        connection.execute("UPDATE models SET dimension = 10")
        connection.execute("DELETE FROM vectors")
    forget_stored_indexes(tmp_path)
    run = search(tmp_path)
    assert cache_use(run) == {"from_cache": 0, "embedded": 66}
    (warning,) = warnings_of(run)
    assert "10 dimensions where its vectors have 64; corrected" in warning
    assert cache_use(search(tmp_path)) == {"from_cache": 66, "embedded": 0}


def test_an_engine_vector_that_is_not_a_unit_vector_is_never_stored(tmp_path: Path) -> None:
    fingerprint = ModelFingerprint("f" * 64, "broken-engine", Path("/nowhere"), 128, "fp32", "f" * 64)
    vectors = normalize_rows(np.random.default_rng(3).standard_normal((3, 4))).astype(np.float32)
    vectors[1] = np.nan
    extents = [ReadingExtent(1, 1)] * 3
    with VectorCache.open(tmp_path) as cache:
        ModelCache(cache, fingerprint, None).store(["a", "b", "c"], vectors, extents)
        assert cache.warnings == [
            "1 vector(s) from broken-engine were not finite unit vectors; they were not stored"
        ]
        found = ModelCache.of(cache, fingerprint).lookup(["a", "b", "c"])
    assert [entry is not None for entry in found] == [True, False, True]


def _explorer_process_indexes(cache_dir: str, texts: list[str], done: Any) -> None:
    """What the explorer does to the cache: its embedding process indexes ``texts``."""
    from raglens.embedding_events import ModelChoice, WindowsDone
    from raglens.embedding_process import EmbeddingProcess

    process = EmbeddingProcess(ModelChoice(factory="tests.fakes:HashingEmbedder"), cache_dir=cache_dir)
    try:
        process.index_windows(1, texts)
        while not isinstance(process.next_event(timeout=60), WindowsDone):
            pass
    finally:
        process.close()
        done.set()


def test_the_explorer_and_a_headless_search_write_one_cache_at_once(tmp_path: Path) -> None:
    """Both finish, neither warns, and the cache holds every window once, each readable."""
    from raglens.corpus import CorpusOptions, load_corpus
    from raglens.windows import WindowParams, cut_corpus, window_texts

    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    texts = window_texts(corpus, cut_corpus(corpus, WindowParams()))
    context = multiprocessing.get_context("spawn")
    done = context.Event()
    explorer = context.Process(target=_explorer_process_indexes, args=(str(tmp_path), texts, done))
    explorer.start()
    headless = search(tmp_path)
    explorer.join(120)
    assert done.is_set() and explorer.exitcode == 0
    use = cache_use(headless)
    assert use["from_cache"] + use["embedded"] == 66
    assert warnings_of(headless) == []
    with sqlite3.connect(tmp_path / CACHE_FILE_NAME) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert connection.execute("SELECT count(*) FROM vectors").fetchone() == (len(set(texts)),)
    assert cache_use(search(tmp_path)) == {"from_cache": 66, "embedded": 0}


def _files_json_as(uid: int, root: str, out: str) -> None:
    """Run ``raglens files ROOT --json`` as user ``uid`` (a forked child: everything is imported first)."""
    import contextlib
    import io

    from raglens.cli.main import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(["files", root, "--json"])  # as root first: every module a run needs is loaded now
    if os.geteuid() == 0:
        os.setgid(uid)
        os.setuid(uid)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["files", root, "--json"])
    Path(out).write_text(json.dumps({"code": code, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()}))


def _files_as_nobody(root: Path, out: Path) -> dict[str, Any]:
    """What ``raglens files ROOT --json`` reports to a user who is not root and does not own ROOT."""
    out.touch()
    out.chmod(0o666)
    child = multiprocessing.get_context("fork").Process(
        target=_files_json_as, args=(65534, str(root), str(out))
    )
    child.start()
    child.join(60)
    assert child.exitcode == 0
    report: dict[str, Any] = json.loads(out.read_text())
    return report


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork to drop privileges after the imports")
def test_an_unreadable_file_or_folder_as_a_user_who_cannot_read_it_gets_its_reason() -> None:
    """Root reads any file, so as root the run drops to ``nobody`` (uid 65534) after its imports."""
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        base.chmod(0o755)  # mkdtemp makes it 0700; nobody must reach the corpus
        root = base / "corpus"
        root.mkdir(mode=0o755)
        (root / "open.md").write_text("anyone may read this\n")
        (root / "open.md").chmod(0o644)
        (root / "secret.md").write_text("only its owner may read this\n")
        (root / "secret.md").chmod(0)
        report = _files_as_nobody(root, base / "out.json")
        assert report["code"] == 0, report["stderr"]
        document = json.loads(report["stdout"])
        assert [entry["path"] for entry in document["files"]] == ["open.md"]
        assert {entry["path"]: entry["reason"] for entry in document["skipped"]} == {
            "secret.md": "unreadable"
        }
        root.chmod(0o700)  # now the folder itself: listed by its owner only
        report = _files_as_nobody(root, base / "out2.json")
        assert report["code"] == 2 and report["stdout"] == ""
        assert report["stderr"].strip() == f"raglens: {root}: cannot list the folder (Permission denied)"
        inner = root / "inner"
        inner.mkdir(mode=0o755)
        report = _files_as_nobody(inner, base / "out3.json")  # under a folder it may not enter
        assert report["code"] == 2
        assert report["stderr"].strip() == f"raglens: {inner}: cannot read it (Permission denied)"
