"""``raglens files --json`` on a corpus of ~100k windows, against reading and windowing that corpus alone.

Usage: uv run python benchmarks/files_scale.py SOURCE [--windows 100000] [--rounds 2]

Builds the corpus in a temporary folder from copies of the real repository SOURCE (each copy under a
path of its own, so no two files are the same path), until it cuts into at least ``--windows`` windows
of 1000/200 characters. Then, alternating, each in a fresh process: the floor (the corpus read and cut
into windows, nothing else) and ``raglens files --json`` (which also tokenises every window with the
model's tokenizer to measure what the model reads). Reports wall time and peak resident memory of
each, and their ratios (issue 29's goal: at most 1.3x the floor in both).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.app_responsiveness import ensure_bytecode

FLOOR = """
import sys, time
started = time.perf_counter()
from raglens.corpus import CorpusOptions, scan_corpus
from raglens.windows import WindowParams, cut_corpus
corpus = scan_corpus(sys.argv[1], CorpusOptions())
windows = cut_corpus(corpus, WindowParams())
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(len(windows), time.perf_counter() - started, peak)
"""

FILES = """
import contextlib, io, sys, time
started = time.perf_counter()
from raglens.cli.main import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(["files", sys.argv[1], "--json"])
assert code == 0, code
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(out.getvalue().count('"path"'), time.perf_counter() - started, peak)
"""


def build_corpus(source: Path, target: Path, windows: int, *, distinct: bool = False) -> int:
    """Copies of ``source`` under ``target``/copyN until they cut into at least ``windows`` windows.

    With ``distinct``, each copy's text files start with a line naming the copy, one character longer
    per copy, so every window's offsets and text differ from every other copy's: nothing can be read
    or embedded once for several copies. (The count returned is then that of the unchanged copies.)
    """
    from raglens.corpus import CorpusOptions, scan_corpus
    from raglens.windows import WindowParams, cut_corpus

    scanned = scan_corpus(source, CorpusOptions())
    per_copy = len(cut_corpus(scanned, WindowParams()))
    copies = -(-windows // per_copy)
    ignore = shutil.ignore_patterns(".git")
    for number in range(copies):
        copy = target / f"copy{number:04d}"
        shutil.copytree(source, copy, ignore=ignore)
        if distinct:
            line = f"# copy {number} " + "~" * number + "\n"
            for text_file in scanned.files:
                (copy / text_file.path).write_text(line + text_file.text, encoding="utf-8")
    return copies * per_copy


def measure(script: str, corpus: Path) -> tuple[float, float]:
    """Seconds and peak resident MiB of ``script`` run on ``corpus`` in a fresh process (the child's own
    VmHWM, in KiB: ``ru_maxrss`` would carry this process's peak over the exec)."""
    done = subprocess.run(
        [sys.executable, "-c", script, str(corpus)], capture_output=True, text=True, check=True
    )
    _, seconds, peak_kib = done.stdout.split()[-3:]
    return float(seconds), float(peak_kib) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("--windows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--distinct", action="store_true", help="make every copy's windows differ (no text is read once)"
    )
    args = parser.parse_args()
    ensure_bytecode()
    with tempfile.TemporaryDirectory(prefix="raglens-files-scale-") as folder:
        corpus = Path(folder) / "corpus"
        expected = build_corpus(args.source.resolve(), corpus, args.windows, distinct=args.distinct)
        how = "distinct copies" if args.distinct else "copies"
        print(f"corpus: {expected:,} windows of 1000/200 characters from {how} of {args.source}")
        floors, files = [], []
        for _ in range(args.rounds):
            floors.append(measure(FLOOR, corpus))
            files.append(measure(FILES, corpus))
        floor_s = statistics.median(s for s, _ in floors)
        floor_mib = statistics.median(m for _, m in floors)
        files_s = statistics.median(s for s, _ in files)
        files_mib = statistics.median(m for _, m in files)
        print(f"floor (read and cut alone): {floor_s:.1f} s, peak {floor_mib:.0f} MiB")
        print(f"raglens files --json:       {files_s:.1f} s, peak {files_mib:.0f} MiB")
        ratios = f"{files_s / floor_s:.2f}x the time, {files_mib / floor_mib:.2f}x the memory"
        print(f"ratio: {ratios} (goal <= 1.3x)")
        print(json.dumps({"floor": floors, "files": files}))


if __name__ == "__main__":
    main()
