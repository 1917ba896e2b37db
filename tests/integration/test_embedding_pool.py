"""sentence-transformers' own multi-process pool behind ``--device a,b``: the same vectors as one
process, and no worker outlives the process that started it."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from raglens.corpus import CorpusOptions, load_corpus
from raglens.embedding import SentenceTransformerEmbedder
from raglens.windows import WindowParams, cut_corpus, window_texts
from tests.conftest import REPO_ROOT, SAMPLE_CORPUS

pytestmark = pytest.mark.model

QUESTIONS = (
    "how are failed jobs retried with backoff?",
    "drain_pending_jobs",
    "Wie starte ich einen Worker?",
)


def test_a_pool_of_two_cpu_workers_embeds_like_one_process(
    real_embedder: SentenceTransformerEmbedder,
) -> None:
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    texts = window_texts(corpus, cut_corpus(corpus, WindowParams()))
    pooled = SentenceTransformerEmbedder(device="cpu,cpu")
    assert (pooled.device, pooled.worker_count) == ("cpu+cpu", 2)
    by_pool, alone = pooled.encode(texts), real_embedder.encode(texts)
    assert by_pool.shape == alone.shape
    assert float(np.abs(by_pool - alone).max()) < 1e-6
    for question in QUESTIONS:
        top_pool = np.argsort(-(by_pool @ pooled.encode_query(question)), kind="stable")[:10]
        top_alone = np.argsort(-(alone @ real_embedder.encode_query(question)), kind="stable")[:10]
        assert top_pool.tolist() == top_alone.tolist(), question


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its reaper is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def _pool_starter(tmp_path: Path, then: str) -> subprocess.Popen[str]:
    """A process that starts a pool of two CPU workers, prints their pids, then runs ``then``."""
    script = tmp_path / "start_pool.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys, time
            from raglens.embedding import SentenceTransformerEmbedder

            if __name__ == "__main__":
                embedder = SentenceTransformerEmbedder(device="cpu,cpu")
                embedder.encode(["one window", "another window"])
                print(*(process.pid for process in embedder._pool["processes"]), flush=True)
                {then}
            """
        )
    )
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    with open(tmp_path / "stderr.txt", "w") as errors:  # a file: a pipe nobody reads could fill
        return subprocess.Popen(
            [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=errors, text=True, env=environment
        )


def _worker_pids(starter: subprocess.Popen[str], tmp_path: Path) -> list[int]:
    """The pids the starter printed, within five minutes (its stderr if it printed none)."""
    assert starter.stdout is not None
    ready, _, _ = select.select([starter.stdout], [], [], 300)
    line = starter.stdout.readline() if ready else ""
    assert line, (tmp_path / "stderr.txt").read_text()
    return [int(pid) for pid in line.split()]


def test_a_pool_ends_with_its_process_and_leaves_nothing_on_the_terminal(tmp_path: Path) -> None:
    """Stopped at exit: no worker left, and no "leaked semaphore" warning from the resource tracker
    (a worker stopped by SIGTERM mid-loop left tqdm's lock registered)."""
    starter = _pool_starter(tmp_path, "pass")
    workers = _worker_pids(starter, tmp_path)
    printed = time.monotonic()
    starter.wait(timeout=300)
    # Said on failure: a stop over STOP_WAIT_S (30 s) means a worker was killed, not asked to exit.
    stopping = f"the starter exited {time.monotonic() - printed:.1f} s after its pool embedded"
    err = (tmp_path / "stderr.txt").read_text()
    assert starter.returncode == 0, err
    assert len(workers) == 2
    assert "leaked semaphore" not in err, f"{stopping}:\n{err}"
    assert not any(_running(pid) for pid in workers)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_the_pool_s_workers_die_when_the_process_that_started_them_is_killed(tmp_path: Path) -> None:
    starter = _pool_starter(tmp_path, "time.sleep(600)")
    try:
        workers = _worker_pids(starter, tmp_path)
        assert len(workers) == 2 and all(_running(pid) for pid in workers)
        starter.send_signal(signal.SIGKILL)
        starter.wait(timeout=30)
        deadline = time.monotonic() + 30
        while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_running(pid) for pid in workers), "a pool worker outlived its parent"
    finally:
        starter.kill()
        starter.wait(timeout=30)
