"""The headless CLI: exit codes, stdout/stderr separation, the JSON shape and terminal safety."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from raglens.cli.main import main
from raglens.corpus import CorpusOptions, load_corpus
from raglens.embedding import SentenceTransformerEmbedder
from raglens.engine import Engines
from raglens.pipeline import build_index
from raglens.retrieval import DenseRetriever
from raglens.windows import WindowParams
from tests.conftest import REPO_ROOT, SAMPLE_CORPUS, MakeTree

HIT_KEYS = {
    *("rank", "score", "path", "start", "end", "line_start", "line_end", "citation", "text"),
    *("lexical", "noise", "above_noise", "changed_on_disk"),
}
HOSTILE_TEXT = (
    "Clear the screen \x1b[2J\x1b[H, set the title \x1b]0;owned\x07, copy to the clipboard "
    "\x1b]52;c;cm0gLXJmIH4=\x07, ring \x07, erase\x08\x08.\n[bold red]markup[/] too.\n" * 3
)


@pytest.fixture
def real_model_in_cli(monkeypatch: pytest.MonkeyPatch, real_embedder: SentenceTransformerEmbedder) -> None:
    """The CLI gets the session's real model instead of loading it again."""
    """The CLI opens the session's one loaded model instead of loading it again."""
    monkeypatch.setattr(Engines, "_open_model", lambda engines: real_embedder)


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_files_json_lists_indexed_and_skipped(
    capsys: pytest.CaptureFixture[str], make_tree: MakeTree
) -> None:
    root = make_tree({"a.md": "# A\n" + "text " * 400, "b.bin": b"\x00\x01", "node_modules/x.js": "x\n"})
    code, out, err = run_main(capsys, "files", str(root), "--json")
    assert code == 0
    document = json.loads(out)
    assert document["file_count"] == 1
    assert document["files"][0]["path"] == "a.md"
    assert document["files"][0]["window_count"] == 3
    assert document["window_count"] == 3
    assert {(s["path"], s["reason"]) for s in document["skipped"]} == {
        ("b.bin", "binary"),
        ("node_modules/", "vendored"),
    }
    assert err == ""


def test_files_takes_the_cache_flags_every_command_takes(
    capsys: pytest.CaptureFixture[str], make_tree: MakeTree, tmp_path: Path
) -> None:
    root = make_tree({"a.md": "# A\n" + "text " * 400})
    code, out, err = run_main(capsys, "files", str(root), "--cache-dir", str(tmp_path / "c"), "--json")
    assert code == 0 and json.loads(out)["window_count"] == 3, err
    assert not (tmp_path / "c").exists(), "files reads and writes no vectors"
    assert run_main(capsys, "files", str(root), "--no-cache", "--json")[0] == 0


def test_files_human_output_names_every_skip(capsys: pytest.CaptureFixture[str], make_tree: MakeTree) -> None:
    root = make_tree({"a.md": "alpha\n", "big.txt": "x" * 50})
    code, out, _ = run_main(capsys, "files", str(root), "--max-file-bytes", "10")
    assert code == 0
    assert "a.md" in out
    assert "too large" in out and "big.txt" in out


def test_nothing_indexable_exits_3_with_the_reasons(
    capsys: pytest.CaptureFixture[str], make_tree: MakeTree
) -> None:
    root = make_tree({"only.bin": b"\x00\x00"})
    code, out, err = run_main(capsys, "files", str(root), "--json")
    assert code == 3
    assert json.loads(out)["skipped"][0]["reason"] == "binary"
    assert "nothing indexable" in err and "only.bin: binary" in err
    code, out, err = run_main(capsys, "search", str(root), "anything")
    assert (code, out) == (3, "")
    assert "nothing indexable" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["search", "/no/such/place", "q"], "no such file or folder"),
        (
            ["search", "sample_corpus", "q", "--size", "100", "--overlap", "100"],
            "must be smaller than the size",
        ),
        (["search", "sample_corpus", "q", "--size", "0"], "at least 1"),
        (["search", "sample_corpus", "q", "-k", "0"], "-k must be at least 1"),
        (["files", "sample_corpus", "--max-file-bytes", "0"], "must be positive"),
        (["files", "sample_corpus", "--max-file-bytes", "9223372036854775807"], "must be at most"),
        (["search", "sample_corpus", "q", "--max-file-bytes", "9223372036854775807"], "must be at most"),
        (["eval", "sample_corpus", "/dev/zero"], "larger than 64 MiB"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_no_traceback(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run_main(capsys, *argv)
    assert code == 2
    assert out == ""
    assert message in err
    assert "Traceback" not in err
    assert err.startswith("raglens: ")


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "sample_corpus"],
        ["files"],
        ["sample_corpus", "--unit", "tokens"],
        ["search", "sample_corpus", "q", "--lines", "-1"],
        ["search", "sample_corpus", "q", "--model", ""],
        ["files", "sample_corpus", "--model", " "],
        ["cache", "clear", "--model", ""],
    ],
)
def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main(argv)
    assert raised.value.code == 2
    assert "usage: raglens" in capsys.readouterr().err


@pytest.mark.model
def test_search_json_is_one_document_with_the_exact_top_k(
    capsys: pytest.CaptureFixture[str], real_model_in_cli: None, real_embedder: SentenceTransformerEmbedder
) -> None:
    query = "how are failed jobs retried?"
    code, out, err = run_main(capsys, "search", str(SAMPLE_CORPUS), query, "--json", "-k", "4")
    assert code == 0
    document = json.loads(out)
    assert document["query"] == query
    assert document["k"] == 4
    assert document["parameters"] == {
        "unit": "chars",
        "size": 1000,
        "overlap": 200,
        "max_file_bytes": 1_000_000,
    }
    model = document["model"]
    assert {key: model[key] for key in ("name", "dimension", "max_seq_length", "device", "precision")} == {
        "name": "all-MiniLM-L6-v2",
        "dimension": 384,
        "max_seq_length": 256,
        "device": "cpu",
        "precision": "fp32",
    }
    assert model["exact"] is True, "the default is the model's own fp32 ranking"
    assert model["engine"] in ("onnxruntime", "sentence-transformers")
    assert document["corpus"]["file_count"] == 32
    assert len(document["hits"]) == 4
    for hit in document["hits"]:
        assert set(hit) == HIT_KEYS
        assert hit["citation"] == f"{hit['path']}:L{hit['line_start']}-L{hit['line_end']}"
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    index = build_index(corpus, WindowParams(), Engines.serving(real_embedder)).snapshot()
    scores = index.vectors @ real_embedder.encode_query(query)
    top = np.argsort(-scores, kind="stable")[:4]
    assert [(h["path"], h["start"]) for h in document["hits"]] == [
        (index.windows[row].path, index.windows[row].start) for row in top
    ]
    # The first run embeds through the graph written from the weights: the model's own ranking, each
    # score within float32 rounding of sentence-transformers' (2e-7 measured; the witness allows 1e-5).
    assert [h["score"] for h in document["hits"]] == pytest.approx(
        [float(scores[row]) for row in top], abs=1e-6
    )
    for hit in document["hits"]:
        assert hit["text"] == corpus.file(hit["path"]).text[hit["start"] : hit["end"]]
    assert "-> cut into" in err and "-> index ready" in err


@pytest.mark.model
def test_search_human_output_has_bars_citations_and_raw_text(
    capsys: pytest.CaptureFixture[str], real_model_in_cli: None
) -> None:
    code, out, err = run_main(capsys, "search", str(SAMPLE_CORPUS), "Wie starte ich einen Worker?", "-k", "2")
    assert code == 0
    assert "docs/de/schnellstart.md:L" in out
    assert "█" in out
    assert "# Schnellstart" in out
    assert "ranked" in out and "of" in out
    assert "-> found 32 file(s)" in err


@pytest.mark.model
def test_file_content_never_reaches_the_terminal_as_control_codes(
    capsys: pytest.CaptureFixture[str], real_model_in_cli: None, make_tree: MakeTree
) -> None:
    root = make_tree({"hostile.txt": HOSTILE_TEXT, "plain.md": "nothing to see\n"})
    outputs = {}
    for mode, extra in (("human", []), ("json", ["--json"])):
        code, outputs[mode], _ = run_main(capsys, "search", str(root), "clear the screen", "-k", "2", *extra)
        assert code == 0
        for control in ("\x1b", "\x07", "\x08"):
            assert control not in outputs[mode]
    assert "Clear the screen ␛[2J␛[H, set the title ␛]0;owned␇" in outputs["human"]
    assert "[bold red]markup[/]" in outputs["human"], "Rich markup in a file is shown, not applied"
    hit_text = json.loads(outputs["json"])["hits"][0]["text"]
    assert hit_text.startswith("Clear the screen \x1b[2J"), "JSON keeps the exact text, escaped"


@pytest.mark.model
def test_the_console_script_prints_only_json_on_stdout(tmp_path: Path) -> None:
    environment = {**os.environ, "COLUMNS": "100"}
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "raglens",
            "search",
            "sample_corpus",
            "what happens after a job is acknowledged?",
            "--json",
            "-k",
            "3",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    document = json.loads(completed.stdout)
    assert [hit["rank"] for hit in document["hits"]] == [1, 2, 3]
    assert document["hits"][0]["path"] == "docs/queues.md"
    assert "-> writing all-MiniLM-L6-v2 as an ONNX graph once, with no torch to import" in completed.stderr
    assert "all-MiniLM-L6-v2 · fp32 · " in completed.stderr, "the narration names the precision and engine"
    assert "Traceback" not in completed.stderr


def test_the_explorer_without_a_terminal_points_to_search(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(capsys, "sample_corpus")
    assert (code, out) == (2, "")
    assert "needs a terminal" in err and "raglens search PATH QUERY" in err


@pytest.mark.model
def test_a_second_search_embeds_nothing_and_ranks_the_same(
    capsys: pytest.CaptureFixture[str], real_model_in_cli: None, tmp_path: Path
) -> None:
    query = "what happens after a job is acknowledged?"
    argv = ["search", str(SAMPLE_CORPUS), query, "--json", "--cache-dir", str(tmp_path)]
    code, first_out, _ = run_main(capsys, *argv)
    assert code == 0
    code, second_out, _ = run_main(capsys, *argv)
    assert code == 0
    first, second = json.loads(first_out), json.loads(second_out)
    assert first["cache"] == {"folder": str(tmp_path), "from_cache": 0, "embedded": 66}
    assert second["cache"] == {"folder": str(tmp_path), "from_cache": 66, "embedded": 0}
    assert [h["citation"] for h in second["hits"]] == [h["citation"] for h in first["hits"]]
    # The first search wrote the model's graph and embedded through it; the second only the query.
    assert (second["model"]["engine"], second["model"]["window_engine"]) == ("onnxruntime", None)
    assert first["model"]["window_engine"] == "onnxruntime"
    for warm, cold in zip(second["hits"], first["hits"], strict=True):
        assert warm["score"] == pytest.approx(cold["score"], abs=1e-5)
    code, out, _ = run_main(capsys, "search", str(SAMPLE_CORPUS), query, "--json", "--no-cache")
    assert json.loads(out)["cache"] == {"folder": None, "from_cache": 0, "embedded": 66}
    code, out, _ = run_main(capsys, "cache", "info", "--json", "--cache-dir", str(tmp_path))
    info = json.loads(out)
    assert info["entries"] == 66
    assert [(m["name"], m["precision"], m["dimension"]) for m in info["models"]] == [
        ("all-MiniLM-L6-v2", "fp32", 384)
    ]


def test_cache_info_and_clear_without_the_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from raglens.embedding_events import ReadingExtent
    from raglens.fingerprint import ModelFingerprint
    from raglens.vector_cache import ModelCache, VectorCache

    code, out, _ = run_main(capsys, "cache", "info", "--json", "--cache-dir", str(tmp_path / "none"))
    assert code == 0 and json.loads(out)["entries"] == 0
    assert not (tmp_path / "none").exists(), "looking does not create a cache"
    with VectorCache.open(tmp_path) as cache:
        for name in ("model-a", "model-b"):
            fingerprint = ModelFingerprint(name[-1] * 64, name, tmp_path, 128, "fp32", name[-1] * 64)
            vectors = np.eye(3, 4, dtype=np.float32)
            ModelCache(cache, fingerprint, 4).store(["x", "y", "z"], vectors, [ReadingExtent(1, 1)] * 3)
    code, out, _ = run_main(capsys, "cache", "info", "--cache-dir", str(tmp_path))
    assert "model-a fp32" in out and "3 vector(s)" in out
    code, out, _ = run_main(
        capsys, "cache", "clear", "--model", "model-a", "--json", "--cache-dir", str(tmp_path)
    )
    assert json.loads(out)["removed"] == 3
    code, out, _ = run_main(capsys, "cache", "info", "--json", "--cache-dir", str(tmp_path))
    assert [m["name"] for m in json.loads(out)["models"]] == ["model-b"]
    assert json.loads(out)["onnx_exports"] == []
    assert main(["cache", "info", "--model", "x", "--cache-dir", str(tmp_path)]) == 2
    (tmp_path / "onnx").mkdir()
    (tmp_path / "onnx" / "abc-v2.onnx").write_bytes(b"\0" * 2_500_000)
    code, out, _ = run_main(capsys, "cache", "info", "--cache-dir", str(tmp_path))
    assert "onnx export 2.5 MB  abc-v2.onnx" in out, "the export a warm start needs is listed"
    code, out, _ = run_main(capsys, "cache", "info", "--json", "--cache-dir", str(tmp_path))
    assert json.loads(out)["onnx_exports"] == [
        {"path": str(tmp_path / "onnx" / "abc-v2.onnx"), "size_bytes": 2_500_000}
    ]
    rejected = tmp_path / "onnx" / "abc-v3.onnx.rejected"
    rejected.write_bytes(b"\0" * 1_500_000)
    (tmp_path / "onnx" / "abc-v3.onnx.rejected.witness.json").write_text("{}")
    code, out, _ = run_main(capsys, "cache", "info", "--cache-dir", str(tmp_path))
    assert "rejected onnx export 1.5 MB  abc-v3.onnx.rejected" in out, "what failed its check takes room too"
    code, out, err = run_main(capsys, "cache", "clear", "--json", "--cache-dir", str(tmp_path))
    assert code == 0 and json.loads(out)["removed"] == 3, "model-b's vectors"
    assert "removed the rejected onnx export abc-v3.onnx.rejected (1.5 MB)" in err
    assert sorted(p.name for p in (tmp_path / "onnx").iterdir()) == ["abc-v2.onnx"], "a sound export stays"


def test_a_search_reads_only_the_files_changed_since_the_last(
    capsys: pytest.CaptureFixture[str], make_tree: MakeTree, files_read: list[str], tmp_path: Path
) -> None:
    read = files_read
    root = make_tree({"a.md": "alpha beta gamma\n", "b.md": "delta epsilon\n", "c.md": "zeta\n"})
    cache = ["--cache-dir", str(tmp_path / "cache")]
    argv = ["search", str(root), "alpha", "-q", "--json", "--embedder-factory", "tests.fakes:HashingEmbedder"]
    code, _, err = run_main(capsys, *argv, *cache)
    assert code == 0, err
    assert sorted(read) == ["a.md", "b.md", "c.md"]
    read.clear()
    (root / "b.md").write_text("delta epsilon, rewritten\n", encoding="utf-8")
    code, second, _ = run_main(capsys, *argv, *cache)
    assert code == 0 and read == ["b.md"], "a.md and c.md were answered for by the memo"
    assert "delta epsilon, rewritten\n" in {hit["text"] for hit in json.loads(second)["hits"]}
    read.clear()
    code, _, _ = run_main(capsys, *argv, "--no-cache")
    assert code == 0 and sorted(read) == ["a.md", "b.md", "c.md"], "--no-cache reads every file"

    code, out, _ = run_main(capsys, "cache", "info", *cache)
    assert "files as last read" in out and "1 corpus folder(s)" in out
    code, out, _ = run_main(capsys, "cache", "info", "--json", *cache)
    [reading] = json.loads(out)["corpus_readings"]
    assert reading["size_bytes"] > 0 and Path(reading["path"]).exists()
    code, out, _ = run_main(capsys, "cache", "clear", "--json", *cache)
    assert code == 0 and json.loads(out)["removed_readings"] == 1
    assert not Path(reading["path"]).exists(), "clearing the cache removes the copies of the texts"
    code, out, _ = run_main(capsys, "cache", "clear", *cache)
    assert "texts" not in out


def test_cache_info_lists_the_language_identifiers_tables(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from raglens.diagnostics.language_tables import identifier_from_tables

    cache = ["--cache-dir", str(tmp_path / "cache")]
    code, out, _ = run_main(capsys, "cache", "info", "--json", *cache)
    assert code == 0 and json.loads(out)["language_tables_bytes"] == 0
    identifier_from_tables(tmp_path / "cache")
    code, out, _ = run_main(capsys, "cache", "info", "--json", *cache)
    assert json.loads(out)["language_tables_bytes"] > 60_000_000
    code, out, _ = run_main(capsys, "cache", "info", *cache)
    assert "language identifier's tables" in out and "languages/" in out


def test_a_search_on_unchanged_files_takes_the_stored_index_memory_mapped(
    capsys: pytest.CaptureFixture[str], make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from raglens import corpus_memo
    from raglens.stored_index import stored_indexes

    monkeypatch.setattr(corpus_memo, "RACY_NS", -3_600_000_000_000)  # files just written count as settled
    root = make_tree({"a.md": "alpha beta gamma\n", "b.md": "delta epsilon\n", "c.md": "zeta\n"})
    cache = ["--cache-dir", str(tmp_path / "cache")]
    argv = [
        "search",
        str(root),
        "alpha",
        "--json",
        "--embedder-factory",
        "tests.fakes:HashingEmbedder",
        *cache,
    ]
    code, first, err = run_main(capsys, *argv)
    assert code == 0 and "from the index kept" not in err
    assert len(stored_indexes(tmp_path / "cache")) == 1
    code, second, err = run_main(capsys, *argv)
    assert code == 0 and "vectors: all 3 from the index kept when these files were last read" in err
    assert json.loads(second)["cache"]["from_cache"] == 3 and json.loads(second)["cache"]["embedded"] == 0
    assert json.loads(second)["hits"] == json.loads(first)["hits"]
    (root / "c.md").write_text("zeta, rewritten\n", encoding="utf-8")
    code, third, err = run_main(capsys, *argv)
    assert code == 0 and "from the index kept" not in err, "a file changed: the usual way"
    assert json.loads(third)["cache"]["embedded"] == 1
    assert len(stored_indexes(tmp_path / "cache")) == 2, "the new files' index is stored beside"
    code, out, _ = run_main(capsys, "cache", "info", *cache)
    assert "complete indexes" in out and "2 stored" in out
    code, out, _ = run_main(capsys, "cache", "clear", "--model", "another-model", "--json", *cache)
    assert json.loads(out)["removed_indexes"] == 2, "one model's clear: no index lends its vectors after"
    assert stored_indexes(tmp_path / "cache") == []
    code, out, _ = run_main(capsys, "cache", "clear", "--json", *cache)
    assert json.loads(out)["removed_readings"] == 1 and json.loads(out)["removed_indexes"] == 0


@pytest.mark.model
def test_a_cache_folder_that_cannot_be_made_is_one_warning_and_no_cache(
    capsys: pytest.CaptureFixture[str], real_model_in_cli: None, tmp_path: Path
) -> None:
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("")
    argv = ["search", str(SAMPLE_CORPUS), "how are jobs retried?", "--json", "--cache-dir", str(not_a_folder)]
    code, out, err = run_main(capsys, *argv)
    assert code == 0
    assert err.count("cannot create the cache folder") == 1
    assert "ONNX" not in err, "no export is tried into a cache that is not there"
    assert json.loads(out)["cache"] == {"folder": None, "from_cache": 0, "embedded": 66}


def test_a_file_rewritten_while_indexing_marks_its_hits(
    capsys: pytest.CaptureFixture[str], make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree({"a.md": "alpha beta gamma\n", "b.md": "delta epsilon\n"})
    real_search = DenseRetriever.search

    def rewrite_then_search(*args, **kwargs):  # type: ignore[no-untyped-def]
        (root / "a.md").write_text("rewritten while raglens was indexing\n", encoding="utf-8")
        return real_search(*args, **kwargs)

    monkeypatch.setattr(DenseRetriever, "search", rewrite_then_search)
    argv = ["search", str(root), "alpha", "-q", "--embedder-factory", "tests.fakes:HashingEmbedder"]
    code, out, err = run_main(capsys, *argv, "--json")
    assert code == 0, err
    marks = {hit["path"]: hit["changed_on_disk"] for hit in json.loads(out)["hits"]}
    assert marks == {"a.md": True, "b.md": False}
    code, out, _ = run_main(capsys, *argv)
    assert "changed on disk since it was read" in out


def test_a_closed_pipe_ends_the_command_quietly() -> None:
    """``raglens files --json | head -c 10``: no BrokenPipeError traceback, the pipeline's exit code."""
    reader = subprocess.Popen(["head", "-c", "10"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    files = subprocess.run(
        [sys.executable, "-m", "raglens", "files", str(REPO_ROOT), "--json"],
        cwd=REPO_ROOT,
        stdout=reader.stdin,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    assert reader.stdin is not None
    reader.stdin.close()
    reader.wait()
    assert files.returncode in (0, 141), files.stderr
    assert "Traceback" not in files.stderr and "BrokenPipe" not in files.stderr


def test_a_query_with_bytes_that_are_not_utf8_is_searched_with_replacement_characters() -> None:
    from raglens.cli.main import build_parser

    args = build_parser("search").parse_args(["sample_corpus", "caf\udce9 \udcff"])
    assert args.query == "caf\ufffd \ufffd"
    probe = build_parser("probe").parse_args(["sample_corpus", "--probe", "\udcffx"])
    assert probe.probes == ["\ufffdx"]


def test_output_to_a_file_or_pipe_is_never_broken_mid_line(tmp_path: Path) -> None:
    """Rich wrapped at 80 columns off a terminal: the header and citations broke mid-phrase in a file."""
    environment = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
    environment["RAGLENS_CACHE_DIR"] = str(tmp_path)
    search = [sys.executable, "-m", "raglens", "search", "sample_corpus", "how are failed jobs retried?"]
    fake = ["--embedder-factory", "tests.fakes:HashingEmbedder"]
    completed = subprocess.run(
        [*search, "-k", "2", *fake],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    header = completed.stdout.splitlines()[1]
    assert " · k=2 · 1000/200 chars · ranked 66 of 66 windows in 32 files" in header, header
    assert len(header) > 80
